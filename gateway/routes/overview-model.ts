import type { JobRecord } from '../jobs/job-record';
import type { SecondCounters } from '../metrics/second-window';
import { LATENCY_BUCKETS_MS } from '../metrics/latency-buckets';
import { parseDurationMs } from '../registry/manual-scale';
import type { FunctionRecord, ReplicaInfo } from '../registry/registry';
import type { ForecastPoint } from '../registry/forecasts';

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
  /** its cores as a cpuset list (`3`): the CPU device the autoscaler placed it on (`cpuN`; the local agent pins it there); absent: not placed on one */
  cpuset?: string;
  /** its GPU: the one the provider gave it (local: tokend's `gpuN`), else the GPU device the autoscaler placed it on; absent: none */
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
  /** mean batch size over the window: answers carrying X-Batch-Size / Σ 1/X-Batch-Size (nv_inference_count / nv_inference_exec_count); absent: none */
  batchMean?: number;
  /** the live autoscaler's latest load forecast (gateway/registry/forecasts.ts); absent: its policy gives none, or it has not decided yet */
  forecast?: OverviewForecast;
  replicaList: OverviewReplica[];
}

/** A decision's load forecast as the overview shows it. */
export interface OverviewForecast {
  /** RFC3339: when the autoscaler decided */
  at: string;
  /** the rate it provisioned for, req/s (hybrid: R) */
  rps: number;
  /** the forecast's band, req/s (hybrid: the Kalman forecast's q0.1 and q0.9) */
  lo: number;
  hi: number;
  /** the rate the autoscaler observed in that interval, req/s */
  observed: number;
  mean?: number;
  /** e.g. `kalman q0.9` */
  label?: string;
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
  /** the autoscaler's latest forecast for the function */
  forecast?: ForecastPoint;
  /** the autoscaler's device per replica id (gateway/registry/placements.ts) */
  placements?: Readonly<Record<string, { gpu: string }>>;
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

/** A placement's device as the replica's cpuset (`cpuN`: core N) or GPU; nothing for a planned `new:` device or none. */
export function deviceFields(device: string | undefined): { cpuset?: string; gpu?: string } {
  if (!device || device.startsWith('new')) return {};
  const core = /^cpu(\d+)$/.exec(device);
  if (core) return { cpuset: core[1] };
  return /^cpu$/.test(device) ? {} : { gpu: device };
}

/** Mean batch size over the seconds: inferences / batch executions; undefined without a batched answer. */
export function batchMeanOf(seconds: readonly SecondCounters[]): number | undefined {
  let n = 0;
  let execs = 0;
  for (const s of seconds) {
    n += s.batched ?? 0;
    execs += s.batchExecs ?? 0;
  }
  return n > 0 && execs > 0 ? round(n / execs, 2) : undefined;
}

function forecastOf(p: ForecastPoint): OverviewForecast {
  return { at: p.at, rps: p.rps, lo: p.lo, hi: p.hi, observed: p.observed, ...(p.mean !== undefined ? { mean: p.mean } : {}),
    ...(p.label !== undefined ? { label: p.label } : {}) };
}

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
      // a GPU replica's own GPU (the provider's) wins; its CPU is not pinned to the placement's core
      ...(r.gpu ? { gpu: r.gpu } : deviceFields(f.placements?.[r.id]?.gpu)),
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
  const batchMean = batchMeanOf(f.seconds);
  if (batchMean !== undefined) out.batchMean = batchMean;
  if (f.forecast) out.forecast = forecastOf(f.forecast);
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
