/**
 * The contract between a fixed-cluster (multi-tenant) controller and whatever runs it: the Faro
 * simulator (`autoscaler/sim/faro/`), the live platform (`autoscaler/live/`), or a test.
 *
 * A cluster of `capacity` CPU (or GPU) units is shared by several jobs (functions). Every tick the
 * controller sees each job's state and may return a new allocation. A job's allocation is
 * `replicas` replicas, each with the share `quota` of one unit (1 = a whole vCPU / GPU, Faro's
 * only setting; ours may give fractions, which the runner enforces as a CPU quota or a GPU time
 * quota — a replica at quota q serves a request in processingMs / q), and an accept rate (the
 * fraction of the job's requests admitted; the rest are dropped with 429 / counted as infinitely
 * late). Σ replicas·quota never exceeds `capacity`.
 */

/** One job as the controller sees it at a tick. */
export interface JobView {
  readonly name: string;
  /** Per-request service time at quota 1, ms (Faro's p). */
  readonly processingMs: number;
  /** Latency SLO, ms, at `sloPercentile`. */
  readonly sloMs: number;
  readonly sloPercentile: number;
  /** Replicas the job has now (ready + starting): Faro's x⁰. */
  readonly replicas: number;
  /** Replicas ready to serve now. */
  readonly readyReplicas: number;
  /** The quota each of its replicas runs at now. */
  readonly quota: number;
  /** Requests per completed minute so far, oldest first (the predictor's input). */
  readonly minuteCounts: readonly number[];
  /** Requests waiting in the job's queue now. */
  readonly queueLength: number;
  /** Requests being served now. */
  readonly inFlight: number;
  /** Mean and `sloPercentile` latency (ms) of requests completed in the last `windowS` s; NaN when none. */
  readonly recentLatencyMs: { mean: number; pct: number; windowS: number };
  /** Requests dropped in the last tick. */
  readonly droppedLastTick: number;
  /**
   * Optional (the live runner sets it): requests per second offered over the last
   * `recentLatencyMs.windowS` s, dropped ones included: the demand now, where `minuteCounts` only
   * has completed minutes.
   */
  readonly arrivalRps?: number;
}

export interface ClusterView {
  /** Seconds since the run started. */
  readonly nowS: number;
  /** Total units (vCPUs / GPUs) the jobs share. */
  readonly capacity: number;
  readonly jobs: readonly JobView[];
}

/** A job's new allocation; fields left out keep their current value. */
export interface JobAllocation {
  readonly replicas?: number;
  readonly quota?: number;
  /** Fraction of requests admitted, in [0, 1]; 1 admits all. */
  readonly acceptRate?: number;
}

export interface ControllerDecision {
  /** One entry per job, in `ClusterView.jobs` order; null = unchanged. */
  readonly jobs: ReadonlyArray<JobAllocation | null>;
  /** Why, in words a person reads in the event log ("gave 0.4 core of X to Y: utility 2.6 → 2.9"). */
  readonly reason: string;
}

/**
 * A controller is called once per tick (`tickS`, Faro's is 10 s). It may keep state between
 * calls; it returns null when nothing changes. It must be deterministic given its inputs and seed.
 */
export interface ClusterController {
  readonly name: string;
  readonly tickS: number;
  tick(view: ClusterView): ControllerDecision | null;
}

/**
 * Per-minute arrivals forecaster: given the counts seen so far, the next `horizon` minutes'
 * counts at quantile `q` (0.5 = the median forecast).
 */
export interface MinutePredictor {
  readonly name: string;
  forecast(jobIndex: number, minuteCounts: readonly number[], horizon: number, q: number): number[];
}
