/**
 * native/test/gpu-check.sh, the self-contained check for a GPU machine (no Node.js there), on a
 * machine without a GPU: it must say so and exit 0; its dry run (GPU_CHECK_DRY=1) must build its
 * C helpers and run them on the stub driver through to the summary line; and its GPU path, run on
 * the stub with fake nvidia-smi / MPS control / python, must reach every section and compute the
 * torch ratios from what the benchmark reports. No real GPU is involved anywhere here.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { haveCuda, make, nativeDir, run, stubDir, tmp } from './helpers';

const script = path.join(nativeDir, 'test', 'gpu-check.sh');
const NUM = '-?[0-9]+(?:\\.[0-9]+)?';
const VAL = `(${NUM}|na)`;
// a share line: the error of a process the limiter held, or a process below its quota it never held
const SHARE = '(?:err=[0-9.]+pts held=[0-9.]+|short=[0-9.]+pts held=[0-9.]+ \\(device-limited, not counted\\))';
/** The required last line; any field may be "na" when it could not be measured. */
const SUMMARY = new RegExp(
  `^gpu: launch_overhead_ns=${VAL} share_error_pct=${VAL} torch_q025=${VAL} torch_q050=${VAL} ` +
    `torch_q100=${VAL} unswapped=([0-9]+|na)$`,
);
const haveNvcc = spawnSync('sh', ['-c', 'command -v nvcc || test -x /usr/local/cuda/bin/nvcc']).status === 0;

function lastLine(out: string): string {
  const lines = out.trimEnd().split('\n');
  return lines[lines.length - 1];
}

function fake(dir: string, name: string, body: string): void {
  const f = path.join(dir, name);
  writeFileSync(f, `#!/usr/bin/env bash\n${body}\n`);
  chmodSync(f, 0o755);
}

/** Processes whose command line names the script's temp dirs (its tokend, probes): none once it exited. */
function leftovers(marker: string): string {
  return spawnSync('sh', ['-c', `ps -eo args | grep -F '${marker}' | grep -v grep || true`], { encoding: 'utf8' }).stdout.trim();
}

test('the script and its python parse', () => {
  expect(spawnSync('bash', ['-n', script]).status).toBe(0);
  expect(spawnSync('bash', ['-n', path.join(nativeDir, 'test', 'gpu', 'lib.sh')]).status).toBe(0);
  const py = spawnSync('python3', ['-c', 'import ast, sys; ast.parse(open(sys.argv[1]).read())',
    path.join(nativeDir, 'test', 'gpu', 'torchbench.py')]);
  if (py.error) console.warn('python3 not found: torchbench.py not parsed');
  else expect(py.status).toBe(0);
});

test('without a GPU it says so and exits 0', async () => {
  const t = tmp('gpuck-');
  try {
    // nvidia-smi present but without a driver, as on a machine with the tools and no GPU
    fake(t.dir, 'nvidia-smi', 'echo "NVIDIA-SMI has failed because it could not communicate with the NVIDIA driver"; exit 9');
    const r = await run('bash', [script], { PATH: `${t.dir}:${process.env.PATH}` }, 30000);
    expect(r.code).toBe(0);
    expect(lastLine(r.stdout))
      .toBe('gpu: no GPU (nvidia-smi -L: NVIDIA-SMI has failed because it could not communicate with the NVIDIA driver); nothing measured');
    // no nvidia-smi at all (this machine's case, unless it has one)
    if (spawnSync('sh', ['-c', 'command -v nvidia-smi']).status !== 0) {
      const r2 = await run('bash', [script], {}, 30000);
      expect(r2.code).toBe(0);
      expect(r2.stdout.trim()).toBe('gpu: no GPU (nvidia-smi not found); nothing measured');
    }
  } finally {
    t.cleanup();
  }
});

(haveCuda ? describe : describe.skip)('on the stub driver', () => {
  // only what the script uses (it builds the same itself, under the same lock, if these fail)
  beforeAll(() => {
    const targets = ['build/tokend', 'build/liblimiter.so', 'build/stub/libcuda.so.1'];
    if (haveNvcc) targets.push('build/prog_cudart_static', 'build/prog_cudart_shared');
    for (const t of targets) make(t);
  }, 180000);

  test('dry run: helpers build, run on the stub, and the summary line has the required format', async () => {
    const t = tmp('gpuck-');
    try {
      const r = await run('bash', [script], { GPU_CHECK_DRY: '1', GPU_CHECK_LOGS: path.join(t.dir, 'logs') }, 55000);
      if (r.code !== 0) console.log(r.stdout, r.stderr);
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/DRY RUN on the stub driver/);
      expect(r.stdout).toContain(`helpers built: tlctl, probe (linked against ${path.join(stubDir, 'libcuda.so.1')})`);
      const m = SUMMARY.exec(lastLine(r.stdout));
      expect(m).not.toBeNull();
      const [, overhead, shareErr, q025, q050, q100, unswapped] = m as RegExpExecArray;
      // measured on the stub: numbers, not na (their values mean nothing on a loaded host)
      expect(overhead).toMatch(new RegExp(`^${NUM}$`));
      expect(shareErr).toMatch(new RegExp(`^${NUM}$`));
      expect([q025, q050, q100]).toEqual(['na', 'na', 'na']); // no torch in a dry run
      // the cudart programs ran under the limiter (their init stops at cuGetExportTable on the stub)
      if (haveNvcc) {
        expect(unswapped).toBe('0');
        expect(r.stdout).toMatch(/cudart static: init failed, .* swapped=[1-9][0-9]* unswapped=0/);
      }
      // each share run on its own line, then the reaction to a quota change
      expect(r.stdout).toMatch(new RegExp(`share alone_q050: q=0\\.5 used=[0-9.]+ ${SHARE}`));
      expect(r.stdout).toMatch(new RegExp(`share timesliced: q=0\\.3 used=[0-9.]+ ${SHARE}; q=0\\.7 used=[0-9.]+ ${SHARE}`));
      expect(r.stdout).toMatch(/reaction 1\.0->0\.2: .* reaction_ms=[0-9]+/);
      expect(r.stdout).toMatch(/events: pair [0-9]+ \/ [0-9]+ ns, empty kernel between them [0-9]+ \/ [0-9]+/);
      expect(readFileSync(path.join(t.dir, 'logs', 'control.log'), 'utf8')).toMatch(/"ok":true,"applied"/);
      expect(leftovers(path.join(tmpdir(), 'gpu-check.'))).toBe('');
    } finally {
      t.cleanup();
    }
  }, 60000);

  test('GPU path with fake nvidia-smi, MPS control and python: every section runs, torch ratios from the bench', async () => {
    const t = tmp('gpuck-');
    try {
      const log = path.join(t.dir, 'fake.log');
      fake(t.dir, 'nvidia-smi', 'case "$1" in -L) echo "GPU 0: Fake GPU (UUID: GPU-fake)" ;; *) echo "Fake GPU, 0.0, Default, Disabled" ;; esac');
      fake(t.dir, 'nvidia-cuda-mps-control',
        `if [ "\${1:-}" = -d ]; then echo "mps -d $CUDA_MPS_PIPE_DIRECTORY" >> ${log}; else echo "mps $(cat)" >> ${log}; fi`);
      // the benchmark's JSON lines: unlimited 1000 img/s at a busy fraction of 0.5, so a quota q
      // should give 1000 x min(1, q / 0.5); it reports exactly that, after setting its quota
      fake(t.dir, 'python', [
        'if [ "$1" = -c ]; then echo "2.11.0+fake 13.0"; exit 0; fi',
        'shift; quotas=; busy=',
        'while [ $# -gt 0 ]; do case $1 in --busy) busy=1 ;; --quotas) quotas=$2; shift ;; --tlctl) tl=$2; shift ;; --control) ctl=$2; ' +
        'shift ;; *) shift ;; esac; shift; done',
        'if [ -n "$busy" ]; then echo \'{"phase": "unlimited", "quota": null, "ips": 1000.0, "n": 100}\'; echo \'{"busy": 0.5, "method": "fake"}\'; fi',
        `for q in \${quotas//,/ }; do env -u LD_PRELOAD "$tl" "$ctl" quota $$ $q $q >> ${log} || exit 1`,
        '  echo "{\\"phase\\": \\"q$q\\", \\"quota\\": $q, \\"ips\\": $(awk -v q=$q \'BEGIN { printf "%.1f", 1000 * (q / 0.5 < 1 ? q / 0.5 ' +
        ': 1) }\'), \\"n\\": 100}"',
        'done',
        'printf "swapped=22\\nunswapped=0\\n" > "$TL_STATS_FILE"', // what the limiter writes at exit
      ].join('\n'));
      const r = await run('bash', [script], {
        PATH: `${t.dir}:${process.env.PATH}`, LD_LIBRARY_PATH: stubDir, GPU_CHECK_QUICK: '1', GPU_CHECK_PYTHON: path.join(t.dir, 'python'),
      }, 55000);
      if (![0, 1].includes(r.code as number)) console.log(r.stdout, r.stderr);
      expect([0, 1]).toContain(r.code); // 1: a target missed (shares on a loaded host)
      const m = SUMMARY.exec(lastLine(r.stdout)) as RegExpExecArray;
      expect(m).not.toBeNull();
      expect(m.slice(3, 6)).toEqual(['1.000', '1.000', '1.000']);
      expect(r.stdout).toMatch(/torch unlimited: 1000\.0 img\/s; GPU busy fraction 0\.5/);
      expect(r.stdout).toMatch(/torch q=0\.25: 500\.0 img\/s, expected 500\.0: ratio 1\.000/);
      // lending (tokend's <request, limit>) on the stub: alone A borrows past its request; beside B each near its request
      const lend = /lending: A \(request 0\.3, limit 1\.0\) alone used ([0-9.]+); beside B \(0\.7 \/ 0\.7\) A used ([0-9.]+), B ([0-9.]+)/.exec(r.stdout);
      expect(lend).not.toBeNull();
      expect(Number(lend![1])).toBeGreaterThan(0.5);
      expect(Number(lend![2])).toBeLessThan(0.45);
      expect(r.stdout).toMatch(/mps spatial \(compute kernel, 864 blocks = 8 per SM of 108\): [0-9.]+ ms at 100 %/);
      // an MPS client sees its share of the SMs (the stub as the driver); the grid stays the device's
      expect(r.stdout).toMatch(/SMs the client saw \/ blocks it ran at 100, 50, 25 %: 108\/864, 54\/864, 27\/864/);
      expect(r.stdout).toMatch(new RegExp(`share mps: q=0\\.3 used=[0-9.]+ ${SHARE}; q=0\\.7`));
      expect(r.stdout)
        .toMatch(/torch mps pair: q=0\.3 600\.0 img\/s \(expected 600\.0\) ratio 1\.000; q=0\.7 1000\.0 img\/s \(expected 1000\.0\) ratio 1\.000/);
      expect(r.stdout).toMatch(/unswapped over .*torch_alone torch_mps_a torch_mps_b: [0-9]+/);
      // MPS started with a private pipe directory and quit; quotas set by the bench's own pid
      const calls = readFileSync(log, 'utf8');
      expect(calls).toMatch(/mps -d \/.*\/mps\n/);
      expect(calls).toMatch(/mps quit/);
      // three phases alone, quota 0.25 with ungated samples (diagnostics), two replicas under MPS
      expect(calls.match(/"ok":true,"applied"/g)?.length).toBe(6);
      expect(r.stdout).toMatch(/torch q=0\.25 with ungated samples: 500\.0 img\/s, ratio 1\.000/);
      expect(leftovers(path.join(tmpdir(), 'gpu-check.'))).toBe('');
    } finally {
      t.cleanup();
    }
  }, 60000);
});
