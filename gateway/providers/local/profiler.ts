import type Redis from 'ioredis';
import { request } from 'undici';
import { FunctionRef, refKey } from '../../lib/names';

/** One measured capability point of a function: a replica at `quota` serving batches of `batch`. */
export interface ProfilePoint {
  batch: number;
  /** Time quota of the device, (0, 1]. */
  quota: number;
  /** SM share of a GPU (1 on the CPU device). */
  smShare: number;
  /** Instances per second one replica sustains. */
  throughput: number;
  /** Mean batch latency, ms (consistent with `throughput`). */
  latencyMs: number;
}

/** A function's capability profile (Dilu-style, measured by the platform at deploy). */
export interface CapabilityProfile {
  function: string;
  /** Spec/image version it was measured for. */
  version: string;
  /** RFC3339 */
  measuredAt: string;
  device: 'cpu' | 'gpu';
  points: ProfilePoint[];
}

export const profileKey = (r: FunctionRef) => `mlfaas:profile:${refKey(r)}`;

export interface ProfileOptions {
  batches: number[];
  quotas: number[];
  /** Seconds per point. */
  seconds: number;
}

/** Batch sizes to profile: powers of two up to the function's max batch size. */
export function batchGrid(maxBatch: number): number[] {
  const out: number[] = [];
  for (let b = 1; b < maxBatch; b *= 2) out.push(b);
  out.push(maxBatch);
  return out;
}

/**
 * Measures a ready replica at every (quota, batch) of the grid through its `/_/profile` endpoint,
 * setting the quota through `setQuota` before each quota's points and `restore` after (the
 * replica's own allotment, which may differ from the grid's cores).
 */
export async function profileReplica(
  socketOrUrl: { socket?: string; url: string },
  opts: ProfileOptions,
  setQuota: (q: number) => Promise<void>,
  restore: () => Promise<void>,
): Promise<ProfilePoint[]> {
  const points: ProfilePoint[] = [];
  try {
    for (const quota of opts.quotas) {
      await setQuota(quota);
      for (const batch of opts.batches) {
        const res = await request(`${socketOrUrl.url}/_/profile`, {
          method: 'POST',
          body: JSON.stringify({ batch, seconds: opts.seconds }),
          headers: { 'content-type': 'application/json' },
          headersTimeout: (opts.seconds + 30) * 1000,
        });
        if (res.statusCode !== 200) {
          await res.body.dump();
          throw new Error(`/_/profile answered ${res.statusCode}`);
        }
        const r = (await res.body.json()) as { instancesPerSec: number; latencyMsMean: number };
        // mean, not median: it is what the measured throughput implies (tails from token waits count)
        points.push({ batch, quota, smShare: 1, throughput: r.instancesPerSec, latencyMs: r.latencyMsMean });
      }
    }
  } finally {
    await restore();
  }
  return points;
}

/**
 * Measurements on a shared machine are noisy; a time quota can never make a batch faster, so for
 * each batch size latency is made non-increasing in quota (the slower of a point and any point at
 * a higher quota) and throughput recomputed to match. Pure.
 */
export function monotone(points: readonly ProfilePoint[]): ProfilePoint[] {
  const out = points.map((p) => ({ ...p }));
  for (const b of new Set(out.map((p) => p.batch))) {
    const row = out.filter((p) => p.batch === b).sort((x, y) => y.quota - x.quota);
    let floor = 0;
    for (const p of row) {
      if (p.latencyMs < floor) {
        p.throughput = p.throughput * (p.latencyMs / floor);
        p.latencyMs = floor;
      }
      floor = p.latencyMs;
    }
  }
  return out;
}

export async function readProfile(redis: Redis, ref: FunctionRef): Promise<CapabilityProfile | undefined> {
  const raw = await redis.get(profileKey(ref));
  return raw ? (JSON.parse(raw) as CapabilityProfile) : undefined;
}
