/** The inference simulator's inputs and results (engine.ts). */
import type { Capability, ScalingSpec, PolicyParams } from '../inference/types';

/** One simulated function: its spec, the profile it runs with, and its arrivals per interval. */
export interface SimFunction {
  spec: ScalingSpec;
  /** Key of the function's profile in `capability` (e.g. a RaPP model name). */
  model: string;
  counts: number[];
  intervalS: number;
  /**
   * A function at zero (min 0) has one replica up at t = 0, as the gateway's wake leaves it (whole
   * device, quota 1) before the policy's first decision: a live run that called it before its trace.
   */
  warmAtStart?: boolean;
}

export interface SimOptions {
  policy: string;
  params?: PolicyParams;
  /** Ground truth for replica latency (and what the policy is told unless `told` is set). */
  capability: Capability;
  /**
   * What the policies are told: a profile measured apart from the ground truth (profile-error.ts),
   * possibly with a planning model of interference (inference/interference.ts). Default: `capability`.
   */
  told?: Capability;
  /**
   * Interference between replicas on one device (inference/interference.ts), β: a batch takes the
   * ground truth × (1 + β·u), u = Σ smShare·quota of the other replicas on its device busy when it
   * starts. 0 or undefined: none.
   */
  interferenceBeta?: number;
  /** Decision interval, s (1 as live). */
  tickS?: number;
  /** Delay from creating a replica to its readiness, s. */
  coldStartS?: number;
  /** $ per GPU-hour (HAS-GPU: $2.48/h for a V100). */
  pricePerGpuHour?: number;
  seed?: number;
  /** A request still queued this long is dropped (counts as a violation), s. */
  timeoutS?: number;
  /** Devices the cluster may use at once. */
  gpuLimit?: number;
  /** Record per-tick arrivals / replicas / share per function. */
  record?: boolean;
  /** The live SLO guard's consecutive seconds over the SLO (MLFAAS_SLO_GUARD_S; live default 5). */
  sloGuardS?: number;
  /** How long the SLO guard's capacity is kept, s (live default GUARD_HOLD_S). */
  sloGuardHoldS?: number;
  /**
   * Quotas are CFS bandwidth with this period, ms (a CPU node's cgroup; cfs.ts): a batch runs at
   * the profile's full-speed (quota 1) latency while the replica's budget per period lasts, the
   * budget being the profile's measured throughput ratio cap(q) ÷ cap(1). Undefined: a batch takes
   * the profile's latency at its quota (a GPU limiter as RaPP measured it).
   */
  cfsPeriodMs?: number;
  /**
   * Where a time quota is enforced. 'slot' (default; HAS-GPU's FaST-GShare rows): per SM partition,
   * so replicas in different partitions of one device each get their whole quota at once.
   * 'device' (the platform: tokend keeps one window per GPU, capacity one window of device time,
   * and scales oversubscribed grants down together; native/tokend/policy.c): a batch starting on
   * a replica runs at quota q·min(1, 1 / (q + Σ quota of the device's other busy replicas)),
   * whatever their SM shares (a GPU without MPS: every replica time-slices the whole device).
   * 'occupancy' (the platform on an MPS node: the limiter charges a replica started at SM share s
   * device time × s, its tokend request = limit = q·s in those units, and tokend scales a device's
   * grants down together only when Σ s·q of its busy replicas exceeds one window): a batch runs at
   * quota q·min(1, 1 / (s·q + Σ smShare·quota of the device's other busy replicas)).
   * In 'device' and 'occupancy' the scale is fixed when the batch starts.
   */
  quotaScope?: 'slot' | 'device' | 'occupancy';
  /**
   * The largest batch a replica runs. 'planned' (default): the batch its placement was planned
   * with. 'function' (the platform: the runtime batches dynamically up to MAX_BATCH_SIZE, set per
   * function from mlfaas.batch.max, not per replica): the function's maxBatchSize.
   */
  replicaBatch?: 'planned' | 'function';
  /**
   * The live loop's online correction (correction.ts): the policy sees the profile × a
   * per-function factor learnt each tick from the simulated latencies and throughputs, as live;
   * the ground truth stays the profile. Off by default.
   */
  correction?: boolean;
}

export interface FunctionResult {
  name: string;
  requests: number;
  /** Requests over the SLO, dropped ones included. */
  violations: number;
  dropped: number;
  p50: number;
  p95: number;
  p99: number;
  coldStarts: number;
  /** Σ over replicas of seconds × smShare × quota. */
  gpuSeconds: number;
  cost: number;
  maxReplicas: number;
  series?: { arrivals: number[]; replicas: number[]; share: number[] };
}

export interface SimResult {
  policy: string;
  functions: FunctionResult[];
  requests: number;
  violations: number;
  violationRate: number;
  p50: number;
  p95: number;
  p99: number;
  coldStarts: number;
  gpuSeconds: number;
  cost: number;
  /**
   * Device-seconds: Σ over devices of the time any replica (starting, serving or draining its last
   * batch) is placed on it: the bill at a whole-GPU granularity (a cloud sells V100s whole, by
   * the second), not perfect packing.
   */
  deviceSeconds: number;
  /** Most devices held at once (by any replica, as deviceSeconds counts them) before the end of the trace. */
  peakDevices: number;
  /** deviceSeconds × the price. */
  deviceCost: number;
  /** Replicas started, by SM share (e.g. "0.1"). */
  placedBySmShare: Record<string, number>;
  /** Batches run. */
  batches: number;
  /** Batches that started while their device's busy replicas' quotas summed over 1 (quotaScope 'device': run at a scaled-down quota). */
  oversubscribedBatches: number;
  /** Batches that started while Σ smShare·quota of their device's busy replicas exceeded 1 (quotaScope 'occupancy': run at a scaled-down quota). */
  overCapacityBatches: number;
  /** Mean wall time of one decision round over all functions, ms. */
  decideMsPerTick: number;
}
