/**
 * The ml-inference runtime's onnxruntime threads do not spin-wait (templates/ml-inference/model.js,
 * ORT_ALLOW_SPINNING): with two intra-op threads in a one-core cpuset under a CFS quota (a replica
 * started before placement keeps the thread count of all cores), a spinning idle thread burns the
 * core and the budget the working one needs. Measured here with the runtime's own Model.load in a
 * v1 cgroup of the test's making, spinning on and off in the same window.
 */
import { spawnSync } from 'node:child_process';
import { accessSync, constants, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');
const CG = '/sys/fs/cgroup';
const usable = (() => {
  try {
    accessSync(join(CG, 'cpuset', 'cpuset.cpus'), constants.W_OK);
    accessSync(join(CG, 'cpu', 'cpu.cfs_quota_us'), constants.W_OK);
    return process.getuid?.() === 0;
  } catch {
    return false;
  }
})();

/** Requests per second of image-classify's model over `seconds`, two intra-op threads, in the group. */
function rate(group: string, spin: boolean, seconds: number): number {
  const script = `
    const { Model } = require(${JSON.stringify(join(ROOT, 'templates/ml-inference/model.js'))});
    (async () => {
      const m = await Model.load(${JSON.stringify(join(ROOT, 'functions/image-classify/model.onnx'))}, { intraOpThreads: 2, allowSpinning: ${spin} });
      const x = new Float32Array(3 * 224 * 224);
      for (let i = 0; i < 3; i++) await m.run([x]);
      const t0 = Date.now(); let n = 0;
      while (Date.now() - t0 < ${seconds * 1000}) { await m.run([x]); n++; }
      console.log(JSON.stringify({ rate: n / ((Date.now() - t0) / 1000) }));
      process.exit(0);
    })();`;
  const r = spawnSync('sh', ['-c', `echo $$ > ${CG}/cpuset/${group}/tasks && echo $$ > ${CG}/cpu/${group}/tasks && exec "$0" -e "$1"`, process.execPath,
    script], {
    env: { ...process.env, ORT_IN_WORKER: '0' },
    encoding: 'utf8',
    timeout: 60_000,
  });
  const line = r.stdout.trim().split('\n').pop() ?? '';
  if (!line.startsWith('{')) throw new Error(`measurement failed: ${r.stderr || r.stdout}`);
  return (JSON.parse(line) as { rate: number }).rate;
}

(usable ? describe : describe.skip)('onnxruntime threads under a CPU quota', () => {
  const group = `mlfaas-test-spin-${process.pid}`;
  beforeAll(() => {
    for (const h of ['cpuset', 'cpu']) mkdirSync(join(CG, h, group));
    writeFileSync(join(CG, 'cpuset', group, 'cpuset.mems'), readFileSync(join(CG, 'cpuset', 'cpuset.mems')));
    writeFileSync(join(CG, 'cpuset', group, 'cpuset.cpus'), '0');
    writeFileSync(join(CG, 'cpu', group, 'cpu.cfs_period_us'), '100000');
    writeFileSync(join(CG, 'cpu', group, 'cpu.cfs_quota_us'), '50000');
  });
  afterAll(() => {
    for (const h of ['cpuset', 'cpu']) {
      try {
        rmdirSync(join(CG, h, group));
      } catch {
        /* a child still exiting: the next start's prune removes it */
      }
    }
  });

  test('two threads in one core at quota 0.5 serve more when they do not spin', () => {
    // spinning first and last, so a disturbance of the host in one window hits both kinds
    const spinA = rate(group, true, 2);
    const quiet = rate(group, false, 4);
    const spinB = rate(group, true, 2);
    const spin = Math.max(spinA, spinB);
    console.log(`mobilenet, 2 threads, one core at quota 0.5: spinning ${spinA.toFixed(1)} / ${spinB.toFixed(1)} req/s, not ` +
      `spinning ${quiet.toFixed(1)} req/s`);
    // measured here: 32 spinning against 62 not (a spinning thread takes half the budget)
    expect(quiet).toBeGreaterThan(1.4 * spin);
  }, 120_000);
});
