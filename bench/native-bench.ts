/**
 * npm run bench:native — the native token limiter on the stub driver:
 *  1. per-launch overhead with and without the limiter (same run, alternated, medians);
 *  2. share accuracy for several quota pairs (1 ms kernels, 20 ms window), GPU and CPU device;
 *  3. quota reaction time (0.8 -> 0.2 and 0.2 -> 0.8).
 * Appends a section to bench/RESULTS.md; the last line printed is
 *   limiter: launch_overhead_ns=<x> share_error_pct=<y> reaction_ms=<z>
 */
import { execFileSync, spawn } from 'node:child_process';
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import * as path from 'node:path';
import { busyFraction, firstReachNs, reactionNs, steadyShares } from './native/analysis';
import { createTokendControl } from '../gateway/providers/local/tokend-control';
import { startTokend } from '../gateway/providers/local/tokend-process';

const root = path.resolve(__dirname, '..');
const build = path.join(root, 'native', 'build');
const WINDOW_MS = 20;
const KERNEL_NS = 1e6;

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
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function overhead(dir: string): Promise<{ base: number; loaded: number; metered: number }> {
  const tokend = await startTokend({ dir, windowMs: WINDOW_MS });
  const prog = path.join(build, 'prog_launch');
  const args = ['--mode', 'async', '--count', '2000000', '--kernel-us', '0', '--blocks', '1'];
  const stub = { LD_LIBRARY_PATH: path.join(build, 'stub') };
  const pre = { ...stub, LD_PRELOAD: path.join(build, 'liblimiter.so') };
  const runs = { base: [] as number[], loaded: [] as number[], metered: [] as number[] };
  for (let i = 0; i < 5; i++) {
    runs.base.push(lastJson((await startProc(prog, args, stub).done).out).perLaunchNs);
    runs.loaded.push(lastJson((await startProc(prog, args, pre).done).out).perLaunchNs);
    // connected to tokend with limit 1; TL_NS_PER_BLOCK=1 keeps the budget from running dry, so this is the fast path
    const env = { ...pre, TL_TOKEND_SOCKET: tokend.socketPath, TL_NS_PER_BLOCK: '1' };
    runs.metered.push(lastJson((await startProc(prog, args, env).done).out).perLaunchNs);
  }
  await tokend.stop();
  return { base: median(runs.base), loaded: median(runs.loaded), metered: median(runs.metered) };
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

async function main(): Promise<void> {
  if (!existsSync('/usr/local/cuda/include/cuda.h')) {
    console.log('native bench: /usr/local/cuda/include/cuda.h missing, limiter not built; nothing to measure');
    console.log('limiter: launch_overhead_ns=NaN share_error_pct=NaN reaction_ms=NaN');
    return;
  }
  execFileSync('make', ['-s', '-C', path.join(root, 'native'), 'test-progs'], { stdio: 'inherit' });
  const dir = mkdtempSync(path.join(tmpdir(), 'tlb-'));
  try {
    const oh = await overhead(dir);
    const launchOverhead = oh.metered - oh.base;
    console.log(`per-launch: stub ${oh.base.toFixed(1)} ns, +limiter (no tokend) ${oh.loaded.toFixed(1)} ns, +limiter metered ${oh.metered.toFixed(1)} ns`);
    const rows: ShareRow[] = [];
    for (const q of [[0.3, 0.7], [0.5, 0.5], [0.2, 0.8], [0.1, 0.4]]) rows.push(await gpuShares(dir, q, 2.5));
    rows.push(await cpuShares(dir, [0.3, 0.7], 2.5));
    for (const r of rows) console.log(`${r.device} quotas ${r.quotas.join('/')}: used ${r.used.map((u) => u.toFixed(3)).join('/')} error ${r.errPts.toFixed(2)} pts`);
    const re = await reaction(dir);
    console.log(`reaction: down ${re.down.toFixed(1)} ms, up ${re.up.toFixed(1)} ms (window ${WINDOW_MS} ms)`);
    const shareErr = Math.max(...rows.filter((r) => r.device.startsWith('gpu')).map((r) => r.errPts));
    const reactionMs = Math.max(re.down, re.up);

    const md = [
      `\n## Native token limiter (${new Date().toISOString()})`,
      '',
      `Machine: ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, no GPU: stub libcuda.so.1 (virtual timeline per process), ` +
        `1 ms kernels, tokend window ${WINDOW_MS} ms. Command: \`npx tsx bench/native-bench.ts\`.`,
      '',
      '| per-launch cost (median of 5 × 2M async launches, 1 block) | ns |',
      '| --- | ---: |',
      `| stub driver alone | ${oh.base.toFixed(1)} |`,
      `| + limiter preloaded, no tokend | ${oh.loaded.toFixed(1)} |`,
      `| + limiter metered by tokend (fast path) | ${oh.metered.toFixed(1)} |`,
      `| **overhead** (metered − alone; target < 200) | **${launchOverhead.toFixed(1)}** |`,
      '',
      '| device | quotas (limit) | used (fraction of device) | share of use | max error (pts; target ≤ 5) |',
      '| --- | --- | --- | --- | ---: |',
      ...rows.map((r) => `| ${r.device} | ${r.quotas.join(' / ')} | ${r.used.map((u) => u.toFixed(3)).join(' / ')} | ` +
        `${r.share.map((u) => u.toFixed(3)).join(' / ')} | ${r.errPts.toFixed(2)} |`),
      '',
      `Quota reaction: 0.8→0.2 ${re.down.toFixed(1)} ms (until every later 2-window span is ≤ 0.3), ` +
        `0.2→0.8 ${re.up.toFixed(1)} ms (until a 2-window span first reaches 0.65); target ≤ 2 windows = ${2 * WINDOW_MS} ms.`,
      '',
    ].join('\n');
    const results = path.join(root, 'bench', 'RESULTS.md');
    if (!existsSync(results)) writeFileSync(results, '# Benchmark results\n');
    appendFileSync(results, md);
    console.log(`limiter: launch_overhead_ns=${launchOverhead.toFixed(1)} share_error_pct=${shareErr.toFixed(2)} reaction_ms=${reactionMs.toFixed(1)}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
