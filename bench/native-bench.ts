/**
 * npm run bench:native — the native token limiter on the stub driver (no GPU needed):
 *  1. per-launch cost of the fast path (async launches, budget never dry), with and without the limiter;
 *  2. share accuracy, one device timeline per process (quota pairs), and the CPU device;
 *  3. contention: 2 and 4 processes on ONE device timeline (STUB_CUDA_SHM), each held to its quota
 *     with a launch cost equal to the kernel's device time, so every budget runs dry: achieved
 *     share of the timeline against the quota, and the time spent in the hooked launch call;
 *  4. 16 threads of one process racing one budget at quota 0.5 and 0.25;
 *  5. quota reaction time (0.8 -> 0.2 and 0.2 -> 0.8);
 *  6. GPU time, not host time: framework-like requests with host gaps (bench/native/gpu-time-report.ts);
 *  7. entry points the CUDA 12/13 resolver asks for that the limiter could not swap.
 * Every measurement is repeated REPS times (interleaved); tables give the median of the runs and
 * a 95 % percentile-bootstrap interval of that median. Writes bench/results/native.md (overwritten
 * each run); the last line printed is
 *   limiter: launch_overhead_ns=<a> share_error_pct=<b> host_gap_charge_error_pct=<c> quota1_loss_pct=<d> unswapped=<e>
 * BENCH_NATIVE_BASELINE=<path to another liblimiter.so> adds its figures to section 7 (same process).
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import * as path from 'node:path';
import { busyFraction, firstReachNs, reactionNs, steadyShares } from './native/analysis';
import { CONTEND_BLOCKS, CONTEND_KERNEL_US, CONTEND_NS_PER_BLOCK, type ContendResult, runContention } from './native/contention';
import { type GpuTimeRep, measureGpuTime, summarizeGpuTime } from './native/gpu-time-report';
import { fmt, median, type Summary, summarize } from './native/stats';
import { createTokendControl } from '../node-runtime/tokend-control';
import { startTokend } from '../node-runtime/tokend-process';

const root = path.resolve(__dirname, '..');
const build = path.join(root, 'native', 'build');
const WINDOW_MS = 20;
const KERNEL_NS = 1e6;
/** repetitions of every measurement (BENCH_NATIVE_REPS, default 5; fewer only for a quick look) */
const REPS = Math.max(1, Math.floor(Number(process.env.BENCH_NATIVE_REPS ?? 5)) || 5);
/** seconds per share / contention run (the first 300 ms of each are warm-up) */
const RUN_S = 2.5;

interface Proc { pid: number; done: Promise<{ code: number | null; out: string; err: string }> }

function startProc(cmd: string, args: string[], env: Record<string, string>): Proc {
  const c = spawn(cmd, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  c.stdout.setEncoding('utf8').on('data', (d: string) => { out += d; });
  c.stderr.setEncoding('utf8').on('data', (d: string) => { err += d; });
  return { pid: c.pid as number, done: new Promise((r) => c.on('close', (code) => r({ code, out, err }))) };
}

const lastJson = (s: string): Record<string, number> => JSON.parse(s.trim().split('\n').filter((l) => l.startsWith('{')).pop() ?? '{}');
const trace = (f: string): number[] => readFileSync(f, 'utf8').split('\n').filter(Boolean).map(Number).sort((a, b) => a - b);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const col = <T>(xs: T[], f: (x: T) => number): Summary => summarize(xs.map(f));

/**
 * One repetition: async launches, stub alone / limiter preloaded / limiter metered (fast path), alternated
 * OVERHEAD_ROUNDS times; the minimum of each (other jobs on the machine only ever add time).
 */
const OVERHEAD_ROUNDS = 3;
async function overhead(dir: string): Promise<{ base: number; loaded: number; metered: number; learnt: number }> {
  const tokend = await startTokend({ dir, windowMs: WINDOW_MS });
  const prog = path.join(build, 'prog_launch');
  const args = ['--mode', 'async', '--count', '2000000', '--kernel-us', '0', '--blocks', '1'];
  const stub = { LD_LIBRARY_PATH: path.join(build, 'stub') };
  const pre = { ...stub, LD_PRELOAD: path.join(build, 'liblimiter.so') };
  // connected to tokend with limit 1; TL_NS_PER_BLOCK=1 keeps the budget from running dry, so this is the fast path
  const env = { ...pre, TL_TOKEND_SOCKET: tokend.socketPath, TL_NS_PER_BLOCK: '1' };
  // the default: each kernel's cost learnt from events around a sample of its launches (0 µs kernels: never dry)
  const learntEnv = { ...pre, TL_TOKEND_SOCKET: tokend.socketPath };
  const r = { base: Infinity, loaded: Infinity, metered: Infinity, learnt: Infinity };
  for (let i = 0; i < OVERHEAD_ROUNDS; i++) {
    r.base = Math.min(r.base, lastJson((await startProc(prog, args, stub).done).out).perLaunchNs);
    r.loaded = Math.min(r.loaded, lastJson((await startProc(prog, args, pre).done).out).perLaunchNs);
    r.metered = Math.min(r.metered, lastJson((await startProc(prog, args, env).done).out).perLaunchNs);
    r.learnt = Math.min(r.learnt, lastJson((await startProc(prog, args, learntEnv).done).out).perLaunchNs);
  }
  await tokend.stop();
  return r;
}

interface ShareRow { device: string; quotas: number[]; used: number[]; share: number[]; errPts: number }

async function gpuShares(dir: string, quotas: number[], seconds: number): Promise<ShareRow> {
  const tokend = await startTokend({ dir, windowMs: WINDOW_MS });
  const ctl = createTokendControl(tokend.controlPath);
  const procs: Proc[] = [];
  for (const [i, q] of quotas.entries()) {
    const p = startProc(path.join(build, 'prog_launch'), ['--seconds', String(seconds), '--kernel-us', '1000', '--trace', path.join(dir, `s${i}.trace`)],
      { LD_LIBRARY_PATH: path.join(build, 'stub'), LD_PRELOAD: path.join(build, 'liblimiter.so'), TL_TOKEND_SOCKET: tokend.socketPath });
    await ctl.setQuota({ pid: p.pid, device: 'gpu0', request: q, limit: q });
    procs.push(p);
  }
  await Promise.all(procs.map((p) => p.done));
  await tokend.stop();
  const s = steadyShares(quotas.map((_, i) => trace(path.join(dir, `s${i}.trace`))), KERNEL_NS, 300e6);
  const errPts = Math.max(...quotas.map((q, i) => Math.abs(s.used[i] - q) * 100));
  return { device: 'gpu (stub)', quotas, used: s.used, share: s.share, errPts };
}

async function cpuShares(dir: string, quotas: number[], seconds: number): Promise<ShareRow> {
  const tokend = await startTokend({ dir, windowMs: WINDOW_MS, cpuCapacity: 1 });
  const ctl = createTokendControl(tokend.controlPath);
  const worker = path.join(root, 'test', 'native', 'fixtures', 'cpu-worker.js');
  const procs = quotas.map(() => startProc(process.execPath, [worker, tokend.socketPath, String(seconds), '2'], {}));
  for (const [i, q] of quotas.entries()) await ctl.setQuota({ pid: procs[i].pid, device: 'cpu', request: q, limit: q });
  const outs = await Promise.all(procs.map((p) => p.done));
  await tokend.stop();
  const lines = outs.map((o) => o.out.trim().split('\n').map((l) => JSON.parse(l) as { t?: number; batches: number }).filter((l) => l.t));
  const lo = Math.max(...lines.map((l) => l[0].t as number)) + 300e6;
  const hi = Math.min(...lines.map((l) => l[l.length - 1].t as number));
  const used = lines.map((l) => {
    const a = l.find((x) => (x.t as number) >= lo) as { t: number; batches: number };
    const b = [...l].reverse().find((x) => (x.t as number) <= hi) as { t: number; batches: number };
    return ((b.batches - a.batches) * 2e6) / (b.t - a.t); // batches of 2 ms -> CPU fraction
  });
  const total = used.reduce((a, b) => a + b, 0);
  const errPts = Math.max(...quotas.map((q, i) => Math.abs(used[i] - q) * 100));
  return { device: 'cpu (tokens.js)', quotas, used, share: used.map((u) => u / total), errPts };
}

async function reaction(dir: string): Promise<{ down: number; up: number }> {
  const tokend = await startTokend({ dir, windowMs: WINDOW_MS });
  const ctl = createTokendControl(tokend.controlPath);
  const tr = path.join(dir, 'r.trace');
  const p = startProc(path.join(build, 'prog_launch'), ['--seconds', '2.1', '--kernel-us', '1000', '--trace', tr],
    { LD_LIBRARY_PATH: path.join(build, 'stub'), LD_PRELOAD: path.join(build, 'liblimiter.so'), TL_TOKEND_SOCKET: tokend.socketPath });
  await ctl.setQuota({ pid: p.pid, device: 'gpu0', request: 0.8, limit: 0.8 });
  await sleep(700);
  const down = await ctl.setQuota({ pid: p.pid, device: 'gpu0', request: 0.2, limit: 0.2 });
  await sleep(700);
  const up = await ctl.setQuota({ pid: p.pid, device: 'gpu0', request: 0.8, limit: 0.8 });
  await p.done;
  await tokend.stop();
  const t = trace(tr);
  const span = 2 * WINDOW_MS * 1e6;
  const r = {
    down: reactionNs(t, down.monoNs, KERNEL_NS, span, (f) => f <= 0.3, up.monoNs) / 1e6,
    up: firstReachNs(t, up.monoNs, KERNEL_NS, span, (f) => f >= 0.65) / 1e6,
  };
  if (busyFraction(t, down.monoNs + span, up.monoNs, KERNEL_NS) > 0.25) r.down = Infinity;
  return r;
}

/** Launch-call figures of one contention run: the median process's fast-path p50, the worst process's p99. */
const callP50 = (r: ContendResult) => median(r.procs.map((p) => p.fastP50Ns));
const callP99 = (r: ContendResult) => Math.max(...r.procs.map((p) => p.fastP99Ns));
/** median over the processes that waited at all of their median wait, µs (0 when none waited) */
const waitedP50Us = (r: ContendResult) => { const w = r.procs.filter((p) => p.waited > 0); return w.length ? median(w.map((p) => p.waitedP50Ns)) / 1e3 : 0; };
/** max over the processes of used − quota, percentage points (negative: every process under its quota) */
const overPts = (r: ContendResult) => Math.max(...r.quotas.map((q, i) => (r.used[i] - q) * 100));
const waitedFrac = (r: ContendResult) => r.procs.reduce((a, p) => a + p.waited, 0) / Math.max(1, r.procs.reduce((a, p) => a + p.timed, 0));

interface Scenario {
  key: string;
  label: string;
  quotas: number[];
  threads?: number;
  depth?: number;
  nsPerBlock?: number | null;
  limiter?: boolean;
  shared?: boolean;
  seconds?: number;
}

const CONTENDED: Scenario[] = [
  { key: 'c2-55', label: '2 processes', quotas: [0.5, 0.5] },
  { key: 'c2-73', label: '2 processes', quotas: [0.7, 0.3] },
  { key: 'c4-25', label: '4 processes', quotas: [0.25, 0.25, 0.25, 0.25] },
  { key: 'c4-4321', label: '4 processes', quotas: [0.4, 0.3, 0.2, 0.1] },
];
/** the same loops with the cost learnt by the limiter instead of fixed (how it does by default on a shared device) */
const LEARNT_SHARED: Scenario = { key: 'c2-73-learnt', label: '2 processes, learnt cost', quotas: [0.7, 0.3], nsPerBlock: null };
const UNCONTENDED: Scenario = { key: 'u1', label: '1 process alone, quota 1', quotas: [1] };
const ALONE_DRY: Scenario = { key: 'u1-05', label: '1 process alone, quota 0.5', quotas: [0.5] };
const STUB_ALONE = (n: number, threads = 1): Scenario =>
  ({ key: `stub-${n}x${threads}`, label: `stub alone, ${n} × ${threads}`, quotas: Array(n).fill(1), threads, limiter: false, seconds: 2 });
const THREADS: Scenario[] = [
  { key: 't16-05-learnt', label: 'learnt cost, 4 launches per sync', quotas: [0.5], threads: 16, depth: 4, nsPerBlock: null, shared: false },
  { key: 't16-025-learnt', label: 'learnt cost, 4 launches per sync', quotas: [0.25], threads: 16, depth: 4, nsPerBlock: null, shared: false },
  { key: 't16-05-fixed', label: `fixed cost, 1 launch per sync`, quotas: [0.5], threads: 16, depth: 1, shared: false },
  { key: 't16-025-fixed', label: `fixed cost, 1 launch per sync`, quotas: [0.25], threads: 16, depth: 1, shared: false },
];

/** Entry points a CUDA 12/13 runtime resolves by (name, version, flags) that came back unswapped:
 * prog_resolver (the resolution sequence of cudart, CUDA 13's cuCtxSynchronize@13000 included) and,
 * where nvcc built them, the real cudart programs (static, shared) up to where the stub stops them. */
async function unswappedCounts(dir: string): Promise<{ swapped: number; unswapped: number; programs: string[] }> {
  const progs = ['prog_resolver', 'prog_cudart_static', 'prog_cudart_shared'].filter((p) => existsSync(path.join(build, p)));
  let swapped = 0;
  let unswapped = 0;
  for (const p of progs) {
    const stats = path.join(dir, `${p}.stats`);
    await startProc(path.join(build, p), [],
      { LD_LIBRARY_PATH: path.join(build, 'stub'), LD_PRELOAD: path.join(build, 'liblimiter.so'), TL_STATS_FILE: stats }).done;
    const kv = Object.fromEntries(readFileSync(stats, 'utf8').split('\n').filter(Boolean).map((l) => l.split('=')));
    swapped += Number(kv.swapped);
    unswapped += Number(kv.unswapped);
  }
  return { swapped, unswapped, programs: progs };
}

async function main(): Promise<void> {
  if (!existsSync('/usr/local/cuda/include/cuda.h')) {
    console.log('native bench: /usr/local/cuda/include/cuda.h missing, limiter not built; nothing to measure');
    console.log('limiter: launch_overhead_ns=NaN share_error_pct=NaN host_gap_charge_error_pct=NaN quota1_loss_pct=NaN unswapped=NaN');
    return;
  }
  execFileSync('make', ['-s', '-C', path.join(root, 'native'), 'cuda-progs'], { stdio: 'inherit' });
  const baselineSo = process.env.BENCH_NATIVE_BASELINE || undefined;
  const dir = mkdtempSync(path.join(tmpdir(), 'tlb-'));
  const load0 = loadavg();
  const t0 = Date.now();
  try {
    const oh: Array<{ base: number; loaded: number; metered: number; learnt: number }> = [];
    const pairs = [[0.3, 0.7], [0.5, 0.5], [0.2, 0.8], [0.1, 0.4]];
    const shareRuns: ShareRow[][] = pairs.map(() => []);
    const cpuRuns: ShareRow[] = [];
    const reactions: Array<{ down: number; up: number }> = [];
    const scenarios = [...CONTENDED, LEARNT_SHARED, UNCONTENDED, ALONE_DRY, STUB_ALONE(1), STUB_ALONE(2), STUB_ALONE(4), STUB_ALONE(1, 16), ...THREADS];
    const cont = new Map<string, ContendResult[]>(scenarios.map((s) => [s.key, []]));
    const repLoad: number[] = [];
    const gpuTime: GpuTimeRep[] = [];
    const swaps = await unswappedCounts(dir);
    for (let rep = 1; rep <= REPS; rep++) {
      oh.push(await overhead(dir));
      for (const [i, q] of pairs.entries()) shareRuns[i].push(await gpuShares(dir, q, RUN_S));
      cpuRuns.push(await cpuShares(dir, [0.3, 0.7], RUN_S));
      reactions.push(await reaction(dir));
      for (const s of scenarios) {
        (cont.get(s.key) as ContendResult[]).push(await runContention({
          build, dir, quotas: s.quotas, seconds: s.seconds ?? RUN_S, threads: s.threads, depth: s.depth,
          nsPerBlock: s.nsPerBlock, limiter: s.limiter, shared: s.shared, windowMs: WINDOW_MS,
        }));
      }
      gpuTime.push(await measureGpuTime(build, dir, baselineSo));
      repLoad.push(loadavg()[0]);
      const c = (k: string) => cont.get(k) as ContendResult[];
      console.log(`rep ${rep}/${REPS} (${((Date.now() - t0) / 1000).toFixed(0)} s): overhead ${(oh[rep - 1].metered - oh[rep - 1].base).toFixed(1)} ns, ` +
        `contended error ${CONTENDED.map((s) => c(s.key)[rep - 1].errPts.toFixed(2)).join('/')} pts, ` +
        `16 threads at 0.5 used ${c('t16-05-learnt')[rep - 1].used[0].toFixed(3)}`);
    }
    const C = (k: string) => cont.get(k) as ContendResult[];
    const load1 = loadavg();

    // ---- 1. fast-path launch cost ----
    const base = col(oh, (o) => o.base);
    const loaded = col(oh, (o) => o.loaded);
    const metered = col(oh, (o) => o.metered);
    const learnt = col(oh, (o) => o.learnt);
    const ohFixed = col(oh, (o) => o.metered - o.base);
    const ohDiff = col(oh, (o) => o.learnt - o.base);
    const gt = summarizeGpuTime(gpuTime, !!baselineSo);
    // ---- 2. shares, one timeline per process ----
    const shareRows = pairs.map((q, i) => ({ quotas: q, runs: shareRuns[i] }));
    const shareErr = Math.max(...shareRows.map((r) => median(r.runs.map((x) => x.errPts))), gt.shareErrPts);
    // ---- 3. contention ----
    const contendedErr = Math.max(...CONTENDED.map((s) => median(C(s.key).map((r) => r.errPts))));
    // ---- 4. 16 threads ----
    const t16 = col(C('t16-05-learnt'), (r) => r.used[0]);
    // ---- 5. reaction ----
    const down = col(reactions, (r) => r.down);
    const up = col(reactions, (r) => r.up);
    const reactionMs = Math.max(down.median, up.median);

    const usedCells = (runs: ContendResult[] | ShareRow[], n: number) =>
      Array.from({ length: n }, (_, i) => fmt(col(runs as Array<{ used: number[] }>, (r) => r.used[i]))).join(' / ');
    const ns = (s: Summary) => fmt(s, 0);
    const contRow = (s: Scenario) => {
      const runs = C(s.key);
      return `| ${s.label} | ${s.quotas.join(' / ')} | ${usedCells(runs, s.quotas.length)} | ${fmt(col(runs, (r) => r.errPts), 2)} | ` +
        `${fmt(col(runs, overPts), 2)} | ${fmt(col(runs, (r) => r.idle))} | ${fmt(col(runs, waitedFrac), 2)} |`;
    };
    const stubFor = (s: Scenario) => (s.threads ?? 1) > 1 ? 'stub-1x16' : `stub-${s.quotas.length}x1`;
    const callRow = (s: Scenario) => {
      const runs = C(s.key);
      const stub = C(stubFor(s));
      const p50 = col(runs, callP50);
      const diff = summarize(runs.map((r, i) => callP50(r) - callP50(stub[i])));
      return `| ${s.label}${s.threads ? ` × ${s.threads} threads` : ''} | ${s.quotas.join(' / ')} | ${ns(p50)} | ${ns(col(runs, callP99))} | ` +
        `${ns(col(stub, callP50))} | ${ns(col(stub, callP99))} | ${ns(diff)} | ${fmt(col(runs, waitedFrac), 2)} | ${ns(col(runs, waitedP50Us))} |`;
    };
    const threadRow = (s: Scenario) => {
      const runs = C(s.key);
      return `| ${s.quotas[0]} | ${s.label} | ${fmt(col(runs, (r) => r.used[0]))} | ${fmt(col(runs, (r) => r.errPts), 2)} | ` +
        `${fmt(col(runs, (r) => (r.used[0] - s.quotas[0]) * 100), 2)} | ${ns(col(runs, (r) => r.stats[0].ns_per_block))} |`;
    };
    const headline = `limiter: launch_overhead_ns=${ohDiff.median.toFixed(1)} share_error_pct=${shareErr.toFixed(2)} ` +
      `host_gap_charge_error_pct=${gt.chargeErrPct.toFixed(2)} quota1_loss_pct=${gt.quota1LossPct.toFixed(2)} unswapped=${swaps.unswapped}`;

    const md = [
      '# Native token limiter — `npm run bench:native`',
      '',
      `Generated by \`npm run bench:native\` (\`npx tsx bench/native-bench.ts\`) on ${new Date().toISOString()}; this file is ` +
        `overwritten by every run. ${((Date.now() - t0) / 1000).toFixed(0)} s.`,
      '',
      `Machine: ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, no GPU: stub libcuda.so.1 (\`native/stub/cuda_stub.c\`), ` +
        `1 ms kernels, tokend window ${WINDOW_MS} ms. Load average (1/5/15 min) ${load0.map((x) => x.toFixed(2)).join(' / ')} at the start, ` +
        `${load1.map((x) => x.toFixed(2)).join(' / ')} at the end, 1-min load after each repetition ${repLoad.map((x) => x.toFixed(1)).join(', ')}` +
        `${Math.max(...repLoad) > cpus().length
          ? ': other jobs shared the machine (a loaded host only delays processes: they fall short of their quota, never above it)'
          : ''}.`,
      '',
      `Every measurement was repeated ${REPS} times (the repetitions interleaved); a cell is the median of the runs and, in brackets, ` +
        `a 95 % percentile-bootstrap interval of that median (2000 resamples; with ${REPS} runs it spans about the 2nd smallest ` +
        'to the 2nd largest run).',
      '',
      '```',
      headline,
      '```',
      '',
      '`launch_overhead_ns`: section 1, the default configuration (costs learnt from events); `share_error_pct`: worst median ' +
        'error of section 2 (GPU rows) and section 7 (framework-like requests alone at 0.25 / 0.5 and time-sliced at 0.3 / 0.7); ' +
        '`host_gap_charge_error_pct`: worst median charge error of section 7 (host gaps 0 / 1× / 5×, 1 and 4 streams); ' +
        '`quota1_loss_pct`: section 7, throughput at quota 1.0 against unlimited (0 when not lower); `unswapped`: section 8. ' +
        `Also measured: quota reaction ${reactionMs.toFixed(1)} ms (section 6), contended share error ${contendedErr.toFixed(2)} pts ` +
        `(section 3), 16 threads at quota 0.5 used ${t16.median.toFixed(3)} (section 5).`,
      '',
      '## 1. Fast-path launch cost (async launches, 1 block, budget never dry)',
      '',
      `| per-launch cost (2M async launches per run; per repetition the fastest of ${OVERHEAD_ROUNDS} alternated runs) | ns |`,
      '| --- | ---: |',
      `| stub driver alone | ${fmt(base, 1)} |`,
      `| + limiter preloaded, no tokend | ${fmt(loaded, 1)} |`,
      `| + limiter metered by tokend, fixed cost (TL_NS_PER_BLOCK=1: no events) | ${fmt(metered, 1)} |`,
      `| + limiter metered by tokend, learnt cost (the default: events around 1 launch in 64) | ${fmt(learnt, 1)} |`,
      `| overhead with the fixed cost (per run) | ${fmt(ohFixed, 1)} |`,
      `| **overhead** (learnt − alone, per run; target < 200) | **${fmt(ohDiff, 1)}** |`,
      '',
      '## 2. Shares, one device timeline per process',
      '',
      'Each process books its kernels on its own timeline (`prog_launch`, 1 launch per synchronize, cost learnt by the limiter); ' +
        '"used" = device time of the completed kernels / wall time, after 300 ms of warm-up.',
      '',
      '| device | quotas (limit) | used (fraction of device) | max error (pts; target ≤ 5) |',
      '| --- | --- | --- | ---: |',
      ...shareRows.map((r) => `| gpu (stub) | ${r.quotas.join(' / ')} | ${usedCells(r.runs, r.quotas.length)} | ${fmt(col(r.runs, (x) => x.errPts), 2)} |`),
      `| cpu (tokens.js) | 0.3 / 0.7 | ${usedCells(cpuRuns, 2)} | ${fmt(col(cpuRuns, (x) => x.errPts), 2)} |`,
      '',
      '## 3. Contention: processes sharing ONE device timeline',
      '',
      `Every process runs a launch-then-synchronize loop (\`native/test/prog_contend.c\`) of 1 ms kernels of ${CONTEND_BLOCKS} blocks ` +
        'on one device timeline shared through `STUB_CUDA_SHM` (a GPU without MPS runs one context at a time, so a kernel waits ' +
        `behind the other processes' kernels), held by tokend to request = limit = its quota. \`TL_NS_PER_BLOCK=${CONTEND_NS_PER_BLOCK}\`: ` +
        `${CONTEND_BLOCKS} × ${CONTEND_NS_PER_BLOCK / 1000} µs = ${CONTEND_KERNEL_US / 1000} ms, each launch is charged exactly its device time ` +
        '(a profiled kernel cost), so with quotas summing to 1 every budget runs dry every window and the throttle path is exercised on ' +
        'every process (the overhead bench above uses TL_NS_PER_BLOCK=1, which never runs dry). "used" = device time of the process\'s ' +
        'completed kernels / wall time over the interval all processes cover, after 300 ms; "max over quota" = the largest used − quota ' +
        '(what the limiter bounds; a process short of its quota, with the device idle, is a host that did not run it in time); ' +
        '"idle" = 1 − Σ used; "waited" = fraction of launch calls that waited for tokens.',
      '',
      '| processes | quotas | used (fraction of the shared timeline) | max abs error (pts) | max over quota (pts) | idle | waited |',
      '| --- | --- | --- | ---: | ---: | ---: | ---: |',
      ...CONTENDED.map(contRow),
      contRow(LEARNT_SHARED),
      '',
      'The last row is the same 0.7 / 0.3 pair with the cost learnt by the limiter (no TL_NS_PER_BLOCK): each kernel\'s cost ' +
        'from CUDA events, which the stub stamps when the device reaches them, so a process is charged its own kernels and not ' +
        'the time it waited behind the other\'s (the previous limiter learnt from in-flight wall time and gave 0.57 / 0.17 here, ' +
        'a quarter of the device idle).',
      '',
      '## 4. Time in the hooked launch call',
      '',
      'Each `cuLaunchKernel` call is timed by the program (two `clock_gettime`, included). "fast" = calls during which the ' +
        'process\'s `throttled` counter did not move (read through the limiter\'s exported `tl_get_stats`, outside the timed part); ' +
        'p50 = median over the processes of each process\'s median, p99 = the worst process\'s p99. "stub alone" = the same ' +
        'processes and threads without the limiter (no quota). Overhead = limiter p50 − stub p50, per repetition. A synchronize ' +
        'loop launches from a cold cache after sleeping in the synchronize, so these are larger than the async figure of table 1; ' +
        'with a learnt cost a sampled launch also records two events. "waited p50" = the median over the processes ' +
        'that waited of their median waited call (with 16 threads it includes fast calls that overlapped another thread\'s wait).',
      '',
      '| scenario | quotas | limiter fast p50 (ns) | limiter fast p99 (ns) | stub alone p50 (ns) | stub alone p99 (ns) | overhead p50 (ns) ' +
      '| waited | waited p50 (µs) |',
      '| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
      callRow(UNCONTENDED),
      callRow(ALONE_DRY),
      ...CONTENDED.map(callRow),
      callRow(THREADS[2]),
      '',
      '## 5. 16 threads of one process racing one budget',
      '',
      '16 threads, each with its own stream, on the process\'s own timeline, 1 ms kernels; "learnt cost": the limiter learns the ' +
        `cost from events (with several threads, on launches into an idle stream); "fixed cost": TL_NS_PER_BLOCK=${CONTEND_NS_PER_BLOCK}. ` +
        'Error = used − quota (signed). "ns/block" = the limiter\'s cost estimate at exit (true: 125000).',
      '',
      '| quota | cost | used | abs error (pts) | used − quota (pts) | ns/block at exit |',
      '| --- | --- | --- | ---: | ---: | ---: |',
      ...THREADS.map(threadRow),
      '',
      '## 6. Quota reaction',
      '',
      `0.8→0.2: ${fmt(down, 1)} ms (until every later 2-window span is ≤ 0.3); 0.2→0.8: ${fmt(up, 1)} ms (until a 2-window span ` +
        `first reaches 0.65); target ≤ 2 windows = ${2 * WINDOW_MS} ms.`,
      '',
      ...gt.markdown,
      '## 8. Entry points resolved by version',
      '',
      `${swaps.programs.join(', ')} under the limiter: ${swaps.swapped} entry points swapped to the limiter's hooks, ` +
        `**${swaps.unswapped} unswapped** (a hooked name the driver answered with a pointer that is no hooked export). ` +
        'The cudart programs stop at cuGetExportTable on the stub (private tables no stub can provide); native/test/gpu-check.sh ' +
        'runs them on a GPU.',
      '',
    ].join('\n');
    const out = path.join(root, 'bench', 'results', 'native.md');
    mkdirSync(path.dirname(out), { recursive: true });
    writeFileSync(out, md);
    console.log(md);
    console.log(`wrote ${path.relative(root, out)}`);
    console.log(headline);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
