import { Router } from 'express';
import type Redis from 'ioredis';
import { invalid, notFound } from '../errors';
import type { JobRecord } from '../jobs/job-record';
import { checkDnsLabel, FunctionRef, refKey, splitQualified } from '../lib/names';
import { readSeconds } from '../metrics/second-window';
import type { FunctionProvider, FunctionStatus } from '../providers/function-provider';
import { MlSpec, parseMlSpec } from '../registry/function-spec';
import type { FunctionRecord } from '../registry/registry';
import { Forecasts, FORECASTS_KEPT } from '../registry/forecasts';
import { PlacementBook } from '../registry/placements';
import { namespaceOf } from './functions';
import { buildOverview, FunctionInputs, Overview } from './overview-model';

/** What the overview reads: the provider (any backend), the per-second counters, this gateway's routing state, the jobs. */
export interface OverviewSources {
  /** functions and their replicas with the quotas and SM shares in force (provider.endpoints merges live settings) */
  provider: Pick<FunctionProvider, 'list' | 'endpoints'>;
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

/** `?limit=N` of /system/forecasts: 1..FORECASTS_KEPT, default all kept. */
export function parseLimit(raw: unknown): number {
  if (raw === undefined) return FORECASTS_KEPT;
  const s = String(raw);
  const n = Number(s);
  if (!/^\d+$/.test(s) || n < 1 || n > FORECASTS_KEPT) throw invalid('limit', `"${s}" must be a whole number from 1 to ${FORECASTS_KEPT}`);
  return n;
}

/** `?function=NAME[.NAMESPACE][&namespace=NS]` naming a function the provider lists (400 / 404 otherwise). */
async function listedFunction(src: OverviewSources, q: Record<string, unknown>): Promise<FunctionRef> {
  if (typeof q.function !== 'string' || q.function === '') throw invalid('function', 'the function name is required (?function=NAME[.NAMESPACE])');
  const ref = splitQualified(q.function, namespaceOf(q.namespace));
  checkDnsLabel(ref.name, 'function');
  checkDnsLabel(ref.namespace, 'namespace');
  const listed = await src.provider.list(ref.namespace);
  if (!listed.some((s) => s.name === ref.name && s.namespace === ref.namespace)) throw notFound(`No such function: ${ref.name}`);
  return ref;
}

/** The ML fields of a listed function (validated at deploy; a value that no longer parses reads as the defaults). */
function mlOf(s: FunctionStatus): MlSpec {
  try {
    return parseMlSpec(s.labels, s.annotations);
  } catch {
    return { minScale: 1, maxScale: 20, scaleToZero: false, sloPercentile: 99 };
  }
}

/** A listed function as the model's record: what `/system/functions` says, plus its parsed ML fields. */
export function recordOf(s: FunctionStatus): FunctionRecord {
  const kind = s.kind === 'training' || s.kind === 'classic' ? s.kind : 'inference';
  return {
    kind,
    createdAt: s.createdAt,
    spec: { service: s.name, namespace: s.namespace, image: s.image, envVars: {}, labels: s.labels, annotations: s.annotations, limits: s.limits, ml: mlOf(s) },
  };
}

/** One snapshot (also for the dashboard's SSE stream): the last `windowSeconds` complete seconds. */
export async function readOverview(src: OverviewSources, windowSeconds = DEFAULT_WINDOW_S): Promise<Overview> {
  const nowMs = (src.now ?? Date.now)();
  const lastSec = Math.floor(nowMs / 1000) - 1; // the current second is still being counted
  const routed = new Map<string, { queue: number; inflight: number }>();
  for (const s of src.routed()) routed.set(refKey(s.ref), { queue: s.queued, inflight: s.inflight });
  const [statuses, jobs] = await Promise.all([src.provider.list(), src.jobs.list()]);
  const functions: FunctionInputs[] = await Promise.all(
    statuses.map(async (status) => {
      const ref = { name: status.name, namespace: status.namespace };
      // the forecast and the placements are for display: a failed read leaves their fields out
      const [replicas, seconds, forecast, placements] = await Promise.all([
        src.provider.endpoints(ref),
        readSeconds(src.redis, ref, lastSec - windowSeconds + 1, lastSec),
        new Forecasts(src.redis).latest(ref).catch(() => undefined),
        new PlacementBook(src.redis).read(ref).catch(() => undefined),
      ]);
      return { record: recordOf(status), desired: status.replicas, replicas, routed: routed.get(refKey(ref)), seconds: [...seconds.values()],
        ...(forecast ? { forecast } : {}), ...(placements ? { placements } : {}) };
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
  // `?function=NAME[.NS]&limit=N`: the autoscaler's forecasts, newest first (the function page's history)
  r.get('/system/forecasts', async (req, res) => {
    const q = req.query as Record<string, unknown>;
    const ref = await listedFunction(src, q);
    const limit = parseLimit(q.limit);
    res.set('Cache-Control', 'no-store').json(await new Forecasts(src.redis).list(ref, limit));
  });
  return r;
}
