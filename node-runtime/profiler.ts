import type Redis from 'ioredis';
import { performance } from 'node:perf_hooks';
import { Pool } from 'undici';
import { FunctionRef, refKey } from '../gateway/lib/names';
import type { CapabilityProfile, ProfilePoint } from '../gateway/providers/capability-profile';

/** The profile types live with the provider contract; re-exported for the profiler's callers. */
export type { CapabilityProfile, ProfilePoint };

export const profileKey = (r: FunctionRef) => `mlfaas:profile:${refKey(r)}`;

export interface ProfileOptions {
  batches: number[];
  quotas: number[];
  /** Seconds per point. */
  seconds: number;
  /** The request body (one instance); default: a zero instance of the model's shape (`sampleBody`). */
  body?: string;
}

/** Batch sizes to profile: powers of two up to the function's max batch size. */
export function batchGrid(maxBatch: number): number[] {
  const out: number[] = [];
  for (let b = 1; b < maxBatch; b *= 2) out.push(b);
  out.push(maxBatch);
  return out;
}

/**
 * A real request body of the function's input: one zero instance of the model's instance shape,
 * as a client sends it (`{"instances": [[0, ...]]}`), from the replica's `GET /` description.
 */
export async function sampleBody(pool: Pool): Promise<string> {
  const res = await pool.request({ path: '/', method: 'GET' });
  if (res.statusCode !== 200) {
    await res.body.dump();
    throw new Error(`GET / answered ${res.statusCode}`);
  }
  const d = (await res.body.json()) as { model?: { shape?: unknown[] } | null };
  const dims = (d.model?.shape ?? []).slice(1).map(Number);
  if (!dims.length || dims.some((x) => !(x > 0))) throw new Error(`no instance shape in GET / (${JSON.stringify(d.model)})`);
  const size = dims.reduce((a, b) => a * b, 1);
  return `{"instances":[[${new Array(size).fill('0').join(',')}]]}`;
}

/** Mean request latency and throughput of `concurrency` closed-loop clients for `seconds`. */
async function drive(pool: Pool, body: string, concurrency: number, seconds: number): Promise<{ throughput: number; latencyMs: number }> {
  const lat: number[] = [];
  const started = performance.now();
  const end = started + seconds * 1000;
  const client = async () => {
    while (performance.now() < end) {
      const t0 = performance.now();
      const res = await pool.request({ path: '/', method: 'POST', body, headers: { 'content-type': 'application/json' },
        headersTimeout: (seconds + 30) * 1000 });
      await res.body.dump();
      if (res.statusCode !== 200) throw new Error(`inference answered ${res.statusCode}`);
      lat.push(performance.now() - t0);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, client));
  const elapsed = (performance.now() - started) / 1000;
  const r3 = (x: number) => Math.round(x * 1000) / 1000;
  return { throughput: r3(lat.length / elapsed), latencyMs: r3(lat.reduce((a, b) => a + b, 0) / Math.max(1, lat.length)) };
}

/**
 * Measures a ready replica at every (quota, batch) of the grid end to end: real JSON request
 * bodies of one instance each through its HTTP inference path (parsing, queueing, dynamic
 * batching, serialising: what a client pays, which model time alone hides), `batch` concurrent
 * keep-alive clients so that the batcher forms batches of about `batch`. `throughput` is requests
 * (= instances) per second, `latencyMs` the mean request latency. The quota is set through
 * `setQuota` before each quota's points and `restore` after (the replica's own allotment).
 */
export async function profileReplica(
  socketOrUrl: { socket?: string; url: string },
  opts: ProfileOptions,
  setQuota: (q: number) => Promise<void>,
  restore: () => Promise<void>,
): Promise<ProfilePoint[]> {
  const points: ProfilePoint[] = [];
  // a sandboxed replica is reachable only through its socket (its port is in its own network namespace)
  const { socket } = socketOrUrl;
  const pool = new Pool(socket ? 'http://localhost' : socketOrUrl.url,
    { connections: Math.max(...opts.batches) * 2, pipelining: 1, ...(socket ? { socketPath: socket } : {}) });
  try {
    const body = opts.body ?? (await sampleBody(pool));
    for (const quota of opts.quotas) {
      await setQuota(quota);
      for (const batch of opts.batches) {
        await drive(pool, body, batch, Math.min(0.2, opts.seconds / 5)); // warm connections, JIT
        const r = await drive(pool, body, batch, opts.seconds);
        points.push({ batch, quota, smShare: 1, throughput: r.throughput, latencyMs: r.latencyMs });
      }
    }
  } finally {
    await pool.close().catch(() => undefined);
    await restore();
  }
  return points;
}

export async function readProfile(redis: Redis, ref: FunctionRef): Promise<CapabilityProfile | undefined> {
  const raw = await redis.get(profileKey(ref));
  return raw ? (JSON.parse(raw) as CapabilityProfile) : undefined;
}
