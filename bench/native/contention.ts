/**
 * Contention runs of native/build/prog_contend under the limiter, shared by bench/native-bench.ts
 * and test/native/limiter-contention.timing.test.ts.
 *
 * Several processes (or one process with many threads) run launch-then-synchronize loops of 1 ms
 * stub kernels. With `shared`, every process books its kernels on ONE device timeline
 * (STUB_CUDA_SHM: a GPU without MPS runs one context at a time), so a process's kernel waits
 * behind the others'. Each process is held by tokend to request = limit = its quota; shares are
 * measured from kernel-completion traces over the interval all processes cover, after a warm-up.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { steadyShares } from './analysis';
import { createTokendControl } from '../../node-runtime/tokend-control';
import { startTokend } from '../../node-runtime/tokend-process';

export const CONTEND_KERNEL_US = 1000;
export const CONTEND_BLOCKS = 8;
/** 8 blocks × 125 µs = 1 ms: each launch is charged exactly its device time, so a budget runs dry. */
export const CONTEND_NS_PER_BLOCK = (CONTEND_KERNEL_US * 1000) / CONTEND_BLOCKS;

export interface ContendProcOut {
  pid: number;
  kernels: number;
  elapsedNs: number;
  busyNs: number;
  metered: number;
  timed: number;
  fast: number;
  waited: number;
  fastP50Ns: number;
  fastP99Ns: number;
  waitedP50Ns: number;
  allP50Ns: number;
  allP99Ns: number;
}

export interface ContendOptions {
  /** native/build */
  build: string;
  /** scratch directory (tokend sockets, traces, the shared timeline file) */
  dir: string;
  /** one process per quota; null = no tokend quota (limiter not preloaded when `limiter` is false) */
  quotas: number[];
  seconds: number;
  /** threads per process (default 1) */
  threads?: number;
  /** launches per synchronize (default 1) */
  depth?: number;
  /** TL_NS_PER_BLOCK; null: learnt by the limiter (default CONTEND_NS_PER_BLOCK) */
  nsPerBlock?: number | null;
  /** all processes on one device timeline (STUB_CUDA_SHM; default true) */
  shared?: boolean;
  /** preload liblimiter.so and hold each process to its quota (default true) */
  limiter?: boolean;
  windowMs?: number;
  /** not timed, not in the shares (default 300 ms) */
  warmupMs?: number;
  /** liblimiter.so to preload (default build/liblimiter.so) */
  limiterSo?: string;
  /** extra environment for every process */
  env?: Record<string, string>;
}

export interface ContendResult {
  quotas: number[];
  /** fraction of the device (timeline) each process used over the common interval */
  used: number[];
  /** each process's part of what all used */
  share: number[];
  /** max |used − quota| over the processes, percentage points */
  errPts: number;
  /** 1 − Σ used: device time nobody used */
  idle: number;
  procs: ContendProcOut[];
  /** limiter counters per process (TL_STATS_FILE), when metered */
  stats: Record<string, number>[];
}

function readKv(file: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const l of readFileSync(file, 'utf8').split('\n')) {
    const [k, v] = l.split('=');
    if (k && v !== undefined) out[k] = Number(v);
  }
  return out;
}

function run(cmd: string, args: string[], env: Record<string, string>, timeoutMs: number) {
  const c = spawn(cmd, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  c.stdout.setEncoding('utf8').on('data', (d: string) => { out += d; });
  c.stderr.setEncoding('utf8').on('data', (d: string) => { err += d; });
  const timer = setTimeout(() => c.kill('SIGKILL'), timeoutMs);
  const done = new Promise<{ code: number | null; out: string; err: string }>((r) =>
    c.on('close', (code) => { clearTimeout(timer); r({ code, out, err }); }));
  return { pid: c.pid as number, done };
}

let runSeq = 0;

export async function runContention(o: ContendOptions): Promise<ContendResult> {
  const tag = `c${process.pid}-${++runSeq}`;
  const limiter = o.limiter ?? true;
  const warmupMs = o.warmupMs ?? 300;
  const npb = o.nsPerBlock === undefined ? CONTEND_NS_PER_BLOCK : o.nsPerBlock;
  const tokend = limiter ? await startTokend({ dir: o.dir, windowMs: o.windowMs ?? 20 }) : null;
  try {
    const ctl = tokend ? createTokendControl(tokend.controlPath) : null;
    const env: Record<string, string> = { LD_LIBRARY_PATH: path.join(o.build, 'stub'), ...o.env };
    if (o.shared ?? true) env.STUB_CUDA_SHM = path.join(o.dir, `${tag}.shm`);
    if (tokend) {
      Object.assign(env, {
        LD_PRELOAD: o.limiterSo ?? path.join(o.build, 'liblimiter.so'),
        TL_TOKEND_SOCKET: tokend.socketPath,
        // a tokend starved by a busy host must not make the limiter fail open mid-run
        TL_TIMEOUT_MS: '5000',
        TL_STATS_FILE: path.join(o.dir, `${tag}-%p.stats`),
      });
      if (npb !== null) env.TL_NS_PER_BLOCK = String(npb);
    }
    const args = (i: number) => ['--seconds', String(o.seconds), '--kernel-us', String(CONTEND_KERNEL_US),
      '--blocks', String(CONTEND_BLOCKS), '--threads', String(o.threads ?? 1), '--depth', String(o.depth ?? 1),
      '--warmup-ms', String(warmupMs), '--trace', path.join(o.dir, `${tag}-${i}.trace`)];
    const procs = o.quotas.map((_, i) => run(path.join(o.build, 'prog_contend'), args(i), env, (o.seconds + 30) * 1000));
    if (ctl) for (const [i, q] of o.quotas.entries()) await ctl.setQuota({ pid: procs[i].pid, device: 'gpu0', request: q, limit: q });
    const outs = await Promise.all(procs.map((p) => p.done));
    for (const r of outs) if (r.code !== 0) throw new Error(`prog_contend exited ${r.code}: ${r.err.slice(-500)}`);
    const parsed = outs.map((r) => JSON.parse(r.out.trim().split('\n').filter((l) => l.startsWith('{')).pop() as string) as ContendProcOut);
    const traces = o.quotas.map((_, i) => readFileSync(path.join(o.dir, `${tag}-${i}.trace`), 'utf8')
      .split('\n').filter(Boolean).map(Number).sort((a, b) => a - b));
    const s = steadyShares(traces, CONTEND_KERNEL_US * 1000, warmupMs * 1e6);
    const stats = tokend ? parsed.map((p) => readKv(path.join(o.dir, `${tag}-${p.pid}.stats`))) : [];
    return {
      quotas: o.quotas,
      used: s.used,
      share: s.share,
      errPts: Math.max(...o.quotas.map((q, i) => Math.abs(s.used[i] - q) * 100)),
      idle: 1 - s.used.reduce((a, b) => a + b, 0),
      procs: parsed,
      stats,
    };
  } finally {
    await tokend?.stop();
  }
}
