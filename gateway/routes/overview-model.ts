import type { JobRecord } from '../jobs/job-record';
import type { SecondCounters } from '../metrics/second-window';
import { LATENCY_BUCKETS_MS } from '../metrics/latency-buckets';
import { parseDurationMs } from '../registry/manual-scale';
import type { FunctionRecord, ReplicaInfo } from '../registry/registry';

/**
 * `GET /system/overview` (issue 26, contract.md §1), pure: one snapshot of every function and job
 * for the dashboard and `mlfaas top`. Fields with no source are omitted, never filled in.
 */

export interface OverviewReplica {
  id: string;
  state: ReplicaInfo['state'];
  /** time quota in (0, 1] of its device */
  cpuQuota?: number;
  /** the burst limit in [quota, 1] the autoscaler set with the quota (absent: the quota is the limit or none was set) */
  cpuLimit?: number;
  smShare?: number;
  /** its cores (not filled yet: no source in the replica record) */
  cpuset?: string;
  /** its GPU (not filled yet) */
  gpu?: string;
  startedAt: string;
}

export interface OverviewFunction {
  name: string;
  namespace: string;
  kind: FunctionRecord['kind'];
  image: string;
  replicas: { ready: number; desired: number; min: number; max: number };
  scaleToZero: boolean;
  /** seconds idle before zero: only when min_scale is 0 and the function sets com.openfaas.scale.zero-duration (else the autoscaler's default applies) */
  idleToZero?: number;
  queueLength: number;
  inflight: number;
  /** arrivals per second over the window */
  rps: number;
  errorsPerS: number;
  /** absent while nothing completed in the window */
  p50Ms?: number;
  p99Ms?: number;
  sloMs?: number;
  sloPercentile?: number;
  replicaList: OverviewReplica[];
}

export interface OverviewJob {
  id: string;
  function: string;
  state: JobRecord['state'];
  /** 0..1: optimizer steps done of the planned iterations */
  progress: number;
  workers: number;
  deadline?: string;
  /** examples/s × statistical efficiency, when the runtime reported both */
  goodput?: number;
}

export interface Overview {
  at: string;
  functions: OverviewFunction[];
  jobs: OverviewJob[];
}

export interface FunctionInputs {
  record: FunctionRecord;
  desired: number;
  replicas: readonly ReplicaInfo[];
  /** this gateway's routing state; absent when it has not routed the function yet */
  routed?: { queue: number; inflight: number };
  /** the window's completed seconds (missing seconds had no traffic) */
  seconds: readonly SecondCounters[];
}

export interface OverviewInputs {
  now: Date;
  /** seconds the rates are averaged over (the window `seconds` were read for) */
  windowSeconds: number;
  functions: readonly FunctionInputs[];
  jobs: readonly JobRecord[];
}

/**
 * The q-quantile (0..1) of a bucketed latency histogram (counts per LATENCY_BUCKETS_MS bucket),
 * linear inside the bucket; the open last bucket answers its lower bound. Undefined when empty.
 */
export function bucketQuantile(buckets: readonly number[], q: number): number | undefined {
  const total = buckets.reduce((a, b) => a + b, 0);
  if (total <= 0) return undefined;
  const rank = Math.min(Math.max(q, 0), 1) * total;
  let seen = 0;
  for (let i = 0; i < buckets.length; i++) {
    const n = buckets[i];
    if (n <= 0) continue;
    const lo = i === 0 ? 0 : LATENCY_BUCKETS_MS[i - 1];
    const hi = LATENCY_BUCKETS_MS[i];
    if (seen + n >= rank) {
      if (!Number.isFinite(hi)) return lo;
      return lo + ((hi - lo) * Math.max(rank - seen, 0)) / n;
    }
    seen += n;
  }
  return LATENCY_BUCKETS_MS[LATENCY_BUCKETS_MS.length - 2];
}

/** The live `limit` the provider merges into a replica from its settings (setQuota's second value). */
const limitOf = (r: ReplicaInfo): number | undefined => {
  const l = (r as ReplicaInfo & { limit?: unknown }).limit;
  return typeof l === 'number' && l > 0 ? l : undefined;
};

const round = (x: number, digits: number) => Math.round(x * 10 ** digits) / 10 ** digits;

function functionOf(f: FunctionInputs, windowSeconds: number): OverviewFunction {
  const { spec } = f.record;
  const w = Math.max(windowSeconds, 1);
  const sum = (k: 'arrivals' | 'errors') => f.seconds.reduce((a, s) => a + s[k], 0);
  const buckets = LATENCY_BUCKETS_MS.map((_, i) => f.seconds.reduce((a, s) => a + (s.buckets[i] ?? 0), 0));
  const p50 = bucketQuantile(buckets, 0.5);
  const p99 = bucketQuantile(buckets, 0.99);
  const out: OverviewFunction = {
    name: spec.service,
    namespace: spec.namespace,
    kind: f.record.kind,
    image: spec.image,
    replicas: { ready: f.replicas.filter((r) => r.state === 'ready').length, desired: f.desired, min: spec.ml.minScale, max: spec.ml.maxScale },
    scaleToZero: spec.ml.scaleToZero,
    queueLength: f.routed?.queue ?? 0,
    inflight: f.routed?.inflight ?? 0,
    rps: round(sum('arrivals') / w, 3),
    errorsPerS: round(sum('errors') / w, 3),
    replicaList: f.replicas.map((r) => ({
      id: r.id,
      state: r.state,
      ...(r.quota > 0 ? { cpuQuota: r.quota } : {}),
      ...(limitOf(r) !== undefined ? { cpuLimit: limitOf(r) } : {}),
      ...(r.smShare !== undefined ? { smShare: r.smShare } : {}),
      startedAt: r.startedAt,
    })),
  };
  const zeroKey = 'com.openfaas.scale.zero-duration';
  const idleMs = spec.ml.minScale === 0 ? parseDurationMs(spec.annotations[zeroKey] ?? spec.labels[zeroKey]) : undefined;
  if (idleMs !== undefined) out.idleToZero = idleMs / 1000;
  if (p50 !== undefined) out.p50Ms = round(p50, 2);
  if (p99 !== undefined) out.p99Ms = round(p99, 2);
  if (spec.ml.sloLatencyMs !== undefined) {
    out.sloMs = spec.ml.sloLatencyMs;
    out.sloPercentile = spec.ml.sloPercentile;
  }
  return out;
}

function jobOf(j: JobRecord): OverviewJob {
  const steps = j.progress?.step ?? 0;
  const progress = j.state === 'completed' ? 1 : j.iterations > 0 ? Math.min(Math.max(steps / j.iterations, 0), 1) : 0;
  const out: OverviewJob = { id: j.id, function: j.function, state: j.state, progress: round(progress, 4), workers: j.workers };
  if (j.deadline) out.deadline = j.deadline;
  const eps = j.progress?.examplesPerSec;
  const eff = j.progress?.statEfficiency;
  if (typeof eps === 'number' && typeof eff === 'number') out.goodput = round(eps * eff, 3);
  return out;
}

export function buildOverview(i: OverviewInputs): Overview {
  const functions = i.functions
    .map((f) => functionOf(f, i.windowSeconds))
    .sort((a, b) => a.namespace.localeCompare(b.namespace) || a.name.localeCompare(b.name));
  const jobs = [...i.jobs].sort((a, b) => b.submittedAt.localeCompare(a.submittedAt) || a.id.localeCompare(b.id)).map(jobOf);
  return { at: i.now.toISOString(), functions, jobs };
}
