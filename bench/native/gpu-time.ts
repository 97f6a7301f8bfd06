/**
 * Framework-like runs of native/build/prog_gaps under the limiter, shared by bench/native-bench.ts
 * and test/native/limiter-gpu-time.timing.test.ts: requests of N kernels with host work between the
 * launches, then a synchronize. The stub driver reports its ground truth (STUB_STATS_FILE: the
 * device time of the process's kernels), the limiter what it charged (TL_STATS_FILE: cost_ns), so
 * the charge is checked against the device, not against a model of it.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { createTokendControl } from '../../node-runtime/tokend-control';
import { startTokend } from '../../node-runtime/tokend-process';

export interface GapsOptions {
  /** native/build */
  build: string;
  dir: string;
  /** one process per entry; null: not held by tokend (the limiter still meters when preloaded) */
  quotas: Array<number | null>;
  seconds: number;
  kernelUs?: number;
  gapUs?: number;
  kernels?: number;
  streams?: number;
  mix?: boolean;
  /** wait per request with an event (cuEventSynchronize) instead of a stream synchronize */
  eventSync?: boolean;
  /** preload liblimiter.so (default true) */
  limiter?: boolean;
  /** liblimiter.so to preload (default build/liblimiter.so) */
  limiterSo?: string;
  /** all processes on ONE device timeline (STUB_CUDA_SHM: a GPU without MPS) */
  shared?: boolean;
  windowMs?: number;
  env?: Record<string, string>;
}

export interface GapsProc {
  requests: number;
  kernels: number;
  /** device share over the counted interval (after the warm-up) */
  share: number;
  countedRequests: number;
  countedNs: number;
  p50Ns: number;
  p99Ns: number;
  /** requests per second over the counted interval */
  rps: number;
  /** fraction of the counted interval its launches waited for tokens */
  throttled: number;
  /** the stub's ground truth: device time of this process's kernels */
  busyNs: number;
  /** what the limiter charged (0 when not preloaded) */
  costNs: number;
  /** (charged − busy) / busy, percent */
  chargeErrPct: number;
  stats: Record<string, number>;
}

const kv = (file: string): Record<string, number> => {
  const out: Record<string, number> = {};
  if (!existsSync(file)) return out;
  for (const l of readFileSync(file, 'utf8').split('\n')) {
    const [k, v] = l.split('=');
    if (k && v !== undefined) out[k] = Number(v);
  }
  return out;
};

export async function runGaps(o: GapsOptions): Promise<GapsProc[]> {
  const metered = o.quotas.some((q) => q !== null) && o.limiter !== false;
  const tokend = metered ? await startTokend({ dir: o.dir, windowMs: o.windowMs ?? 20 }) : null;
  try {
    const ctl = tokend ? createTokendControl(tokend.controlPath) : null;
    const args = ['--seconds', String(o.seconds), '--kernel-us', String(o.kernelUs ?? 200), '--gap-us', String(o.gapUs ?? 0),
      '--kernels', String(o.kernels ?? 20), '--streams', String(o.streams ?? 1), ...(o.mix ? ['--mix'] : []), ...(o.eventSync ? ['--sync', 'event'] : [])];
    const shm = path.join(o.dir, 'gaps.timeline');
    const runs = o.quotas.map((q, i) => {
      const env: Record<string, string> = {
        ...process.env as Record<string, string>,
        LD_LIBRARY_PATH: path.join(o.build, 'stub'),
        STUB_STATS_FILE: path.join(o.dir, `gaps${i}.stub`),
        TL_STATS_FILE: path.join(o.dir, `gaps${i}.tl`),
        ...(o.shared ? { STUB_CUDA_SHM: shm } : {}),
        ...(o.limiter !== false ? { LD_PRELOAD: o.limiterSo ?? path.join(o.build, 'liblimiter.so') } : {}),
        ...(tokend && q !== null ? { TL_TOKEND_SOCKET: tokend.socketPath, TL_TIMEOUT_MS: '5000' } : {}),
        ...o.env,
      };
      const c = spawn(path.join(o.build, 'prog_gaps'), args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      let err = '';
      c.stdout.setEncoding('utf8').on('data', (d: string) => { out += d; });
      c.stderr.setEncoding('utf8').on('data', (d: string) => { err += d; });
      const timer = setTimeout(() => c.kill('SIGKILL'), (o.seconds + 30) * 1000);
      const done = new Promise<{ code: number | null; out: string; err: string }>((r) =>
        c.on('close', (code) => { clearTimeout(timer); r({ code, out, err }); }));
      return { pid: c.pid as number, q, done };
    });
    for (const r of runs) if (ctl && r.q !== null) await ctl.setQuota({ pid: r.pid, device: 'gpu0', request: r.q, limit: r.q });
    const outs = await Promise.all(runs.map((r) => r.done));
    return outs.map((r, i) => {
      if (r.code !== 0) throw new Error(`prog_gaps exited ${r.code}: ${r.err}`);
      const j = JSON.parse(r.out.trim().split('\n').pop() as string) as Record<string, number>;
      const stub = kv(path.join(o.dir, `gaps${i}.stub`));
      const stats = kv(path.join(o.dir, `gaps${i}.tl`));
      const busyNs = stub.busy_ns ?? j.busyNs;
      const costNs = stats.cost_ns ?? 0;
      return {
        requests: j.requests, kernels: j.kernels, share: j.share, countedRequests: j.countedRequests, countedNs: j.countedNs,
        p50Ns: j.p50Ns, p99Ns: j.p99Ns, rps: j.countedNs ? (j.countedRequests * 1e9) / j.countedNs : 0,
        throttled: j.countedNs ? j.throttledNs / j.countedNs : 0,
        busyNs, costNs, chargeErrPct: busyNs ? ((costNs - busyNs) / busyNs) * 100 : 0, stats,
      };
    });
  } finally {
    await tokend?.stop();
  }
}
