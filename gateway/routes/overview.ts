import { Router } from 'express';
import type Redis from 'ioredis';
import { invalid } from '../errors';
import type { JobRecord } from '../jobs/job-record';
import { FunctionRef, refKey } from '../lib/names';
import { readSeconds } from '../metrics/second-window';
import type { Registry } from '../registry/registry';
import { buildOverview, FunctionInputs, Overview } from './overview-model';

/** What the overview reads: the registry, the per-second counters, this gateway's routing state, the jobs. */
export interface OverviewSources {
  registry: Registry;
  redis: Redis;
  /** this gateway's routed functions (FunctionRouter.all()) */
  routed: () => Iterable<{ ref: FunctionRef; queued: number; inflight: number }>;
  jobs: { list(): Promise<JobRecord[]> };
  now?: () => number;
}

export const DEFAULT_WINDOW_S = 5;
export const MAX_WINDOW_S = 60;

/** `?window=N` (seconds the rates and quantiles cover), 1..60, default 5. */
export function parseWindow(raw: unknown): number {
  if (raw === undefined) return DEFAULT_WINDOW_S;
  const s = String(raw);
  const n = Number(s);
  if (!/^\d+$/.test(s) || n < 1 || n > MAX_WINDOW_S) throw invalid('window', `"${s}" must be a whole number of seconds from 1 to ${MAX_WINDOW_S}`);
  return n;
}

/** One snapshot (also for the dashboard's SSE stream): the last `windowSeconds` complete seconds. */
export async function readOverview(src: OverviewSources, windowSeconds = DEFAULT_WINDOW_S): Promise<Overview> {
  const nowMs = (src.now ?? Date.now)();
  const lastSec = Math.floor(nowMs / 1000) - 1; // the current second is still being counted
  const routed = new Map<string, { queue: number; inflight: number }>();
  for (const s of src.routed()) routed.set(refKey(s.ref), { queue: s.queued, inflight: s.inflight });
  const [records, jobs] = await Promise.all([src.registry.list(), src.jobs.list()]);
  const functions: FunctionInputs[] = await Promise.all(
    records.map(async (record) => {
      const ref = { name: record.spec.service, namespace: record.spec.namespace };
      const [desired, replicas, seconds] = await Promise.all([
        src.registry.desired(ref),
        src.registry.replicas(ref),
        readSeconds(src.redis, ref, lastSec - windowSeconds + 1, lastSec),
      ]);
      return { record, desired, replicas, routed: routed.get(refKey(ref)), seconds: [...seconds.values()] };
    }),
  );
  return buildOverview({ now: new Date(nowMs), windowSeconds, functions, jobs });
}

/** `GET /system/overview` (contract.md §1); mounted under /system's auth and same-origin guard. */
export function overviewRoutes(src: OverviewSources): Router {
  const r = Router();
  r.get('/system/overview', async (req, res) => {
    const window = parseWindow(req.query.window);
    res.set('Cache-Control', 'no-store').json(await readOverview(src, window));
  });
  return r;
}
