/**
 * The inference-autoscaling contract shared by the live loop and the simulator.
 *
 * Every policy is pure: `decide(spec, state, observation, now)` reads nothing but its arguments
 * (no clock, no env, no network) and returns the next state with a decision and its reason.
 * Units are in the names or the TSDoc: ms, s, req/s, fractions 0..1.
 */

/** Upper bounds (ms) of the gateway's per-second latency histogram buckets, in order (the gateway's own). */
export { LATENCY_BUCKETS_MS } from '../../gateway/metrics/latency-buckets';

/** What a policy needs to know about a function to scale it (a subset of the gateway's `FunctionSpec`, gateway/registry/function-spec.ts). */
export interface ScalingSpec {
  name: string;
  /** Lower bound on the replica count; at least 1 for the hybrid policy (HAS-GPU R_min). */
  minScale: number;
  maxScale: number;
  /** Latency objective of one request, ms. */
  sloLatencyMs: number;
  /** Percentile the objective applies to, e.g. 99. */
  sloPercentile: number;
  /** Largest batch a replica may run. */
  maxBatchSize: number;
  /**
   * Optional: with minScale 0, scale to zero after this long (ms) with replicas and no work
   * (OpenFaaS's `com.openfaas.scale.zero-duration`). Absent: the policy never goes to zero itself.
   */
  idleToZeroMs?: number;
}

/** One replica as the loop sees it at the end of an interval. */
export interface ReplicaState {
  id: string;
  /** Device id (GPU UUID or name; "cpu" for the CPU device). */
  gpu: string;
  /** Fraction of the device's SMs fixed at start, 0..1 (1 for a CPU device). */
  smShare: number;
  /** Time quota, 0..1 of the device's token window; changeable at run time. */
  quota: number;
  /** Batch size the replica runs with. */
  batchSize: number;
  /** False while cold-starting. */
  ready: boolean;
  /** Completions per second on this replica over the interval, req/s. */
  throughputRps: number;
}

/** A replica seen from its device (any function): enough to compute occupancy and free quota. */
export interface SlotMember {
  replicaId: string;
  fn: string;
  quota: number;
}

/** An SM partition ("row") of a device: replicas in it share `smShare` SMs and split time. */
export interface SmSlot {
  smShare: number;
  members: SlotMember[];
}

/** One device in use. HAS occupancy (HGO) = Σ smShare·quota over its members. */
export interface GpuView {
  id: string;
  slots: SmSlot[];
}

/** The devices in use across the cluster, shared by all functions (placement input). */
export interface ClusterView {
  gpus: GpuView[];
  /** Whether a new device may be taken (false on the single CPU device or a full cluster). */
  canAddGpu: boolean;
}

/** Per-function measurements over one interval (1 s live). */
export interface Observation {
  /** Length of the interval, ms. */
  intervalMs: number;
  arrivals: number;
  completions: number;
  /** Requests dropped or refused in the interval. */
  rejected: number;
  /** Requests waiting in the gateway queue at the end of the interval. */
  queueLength: number;
  /** Requests being executed at the end of the interval. */
  inFlight: number;
  /**
   * Optional: time-averaged requests in the system (queued + executing) over the interval, as
   * Knative's queue-proxy reports concurrency. Policies fall back to queueLength + inFlight.
   */
  meanConcurrency?: number;
  /** Percentiles of completed requests' latency in the interval (ms; NaN when none completed). */
  latencyMs: { p50: number; p95: number; p99: number };
  /** Optional: the interval's completions per LATENCY_BUCKETS_MS bucket (what latencyMs is read from). */
  latencyBuckets?: readonly number[];
  replicas: ReplicaState[];
  cluster: ClusterView;
}

/** A quota change for an existing replica. */
export interface QuotaChange {
  replicaId: string;
  quota: number;
}

/** A new replica's placement. `gpu` starting with "new:" names a device to take (same label → same device). */
export interface Placement {
  gpu: string;
  smShare: number;
  quota: number;
  batchSize: number;
}

/** What to do for one function this interval. Empty arrays mean "no change". */
export interface Decision {
  /** Target replica count after the actions below (existing − remove + add). */
  replicas: number;
  quotas: QuotaChange[];
  add: Placement[];
  /** Ids of replicas to stop. */
  remove: string[];
  /** Load-balancer weights for the replicas kept, by id (sum 1; proportional to capability). */
  weights: Record<string, number>;
  reason: string;
}

/**
 * The load forecast a decision planned with (optional: the hybrid policy fills it; a policy
 * without a forecaster leaves it absent). Published by the live loop for the dashboard; it never
 * changes what is decided.
 */
export interface DecisionForecast {
  /** The rate the decision provisioned for, req/s (hybrid: R, the forecast's upper quantile, at least R_min, plus any cold-start lead). */
  rps: number;
  /** The forecast's central 80 % band for the next interval's rate: its q0.1 and q0.9 (mean ∓ 1.2816·std, never below 0), req/s. */
  lo: number;
  hi: number;
  /** The forecast's mean, req/s. */
  mean: number;
  /** The rate observed over the interval the decision answers, req/s. */
  observed: number;
  /** What forecast, e.g. `kalman q0.9`. */
  label: string;
}

export interface DecideResult<S> {
  decision: Decision;
  nextState: S;
  reason: string;
  /** Optional: the load forecast the decision planned with (DecisionForecast). */
  forecast?: DecisionForecast;
}

/** A pure scaling policy. `now` is ms on the caller's clock (fake in the simulator). */
export interface InferencePolicy<S = unknown> {
  readonly name: string;
  /**
   * Optional: the policy's SLO guard stage (ours: stages/slo-guard.ts), run on each decision with
   * what the loop observed against the SLO; it may add capacity. A baseline that models a published
   * autoscaler has none, so it runs (live and simulated) as its authors ran it.
   */
  readonly guard?: PolicyGuard;
  initialState(spec: ScalingSpec): S;
  decide(spec: ScalingSpec, state: S, obs: Observation, now: number): DecideResult<S>;
}

/** The SLO guard's state: the window's intervals with requests, [requests, of them over the SLO], oldest first, and its hold. */
export interface GuardState {
  window: Array<[number, number]>;
  /** Until when (ms) capacity the guard gave is kept; absent: no hold. */
  holdUntilMs?: number;
}

/** What a guard stage reads besides its state: the decision and the interval it answers. */
export interface GuardInput {
  spec: ScalingSpec;
  obs: Observation;
  decision: Decision;
  /** ms on the caller's clock. */
  now: number;
  /** Seconds of evidence before the guard acts. */
  windowS: number;
  /** How long capacity the guard gave is kept (decisions that reduce capacity are held), s. */
  holdS: number;
  /** The model's capability for the replicas running, req/s. */
  capacityRps: number;
}

/** A guard stage: after the policy's decision, a decision to apply instead, or a hold. Pure. */
export interface PolicyGuard {
  readonly name: string;
  init(): GuardState;
  check(st: GuardState, input: GuardInput): { next: GuardState; decision?: Decision; heldUntilMs?: number };
}

/** Throughput model: req/s that one replica of `fn` sustains. */
export interface Capability {
  /** req/s at batch size `batch`, SM share `smShare` (0..1) and time quota `quota` (0..1); 0 if unknown. */
  capability(fn: string, batch: number, smShare: number, quota: number): number;
  /** Latency of one batch, ms (Infinity if unknown). */
  latencyMs(fn: string, batch: number, smShare: number, quota: number): number;
  /** Batch sizes, SM shares and quotas the model knows for `fn` (ascending). */
  grid(fn: string): { batches: number[]; smShares: number[]; quotas: number[] };
  /**
   * Optional: an opaque token for the latency surface `fn` answers with now. Two calls returning the
   * same token (===) promise identical answers, so policies may cache per token: a new token after a
   * re-profile invalidates their caches, and functions sharing one profile share the token.
   */
  profileKey?(fn: string): object | undefined;
}

/** Forecast of the next interval's arrival rate. */
export interface Forecast {
  /** Expected rate, req/s. */
  mean: number;
  /** Standard deviation of the next observation, req/s. */
  std: number;
}

/** A pure forecaster: state in, state out. */
export interface Predictor<S = unknown> {
  readonly name: string;
  init(): S;
  /** Folds one observed rate (req/s) into the state. */
  observe(state: S, rps: number): S;
  forecast(state: S): Forecast;
}

/** What a policy factory gets besides its own parameters. */
export interface PolicyDeps {
  capability: Capability;
  /** Delay from creating a replica to its readiness, s, when the caller knows it (the simulator does). Optional. */
  coldStartS?: number;
}

export type PolicyParams = Record<string, unknown>;
export type PolicyFactory = (params: PolicyParams, deps: PolicyDeps) => InferencePolicy<any>;
