/**
 * A function's capability profile: the provider contract's view of what a replica sustains at each
 * batch size and device share. The node runtime's profiler (`node-runtime/profiler.ts`) measures
 * it; providers store and return it (`FunctionProvider.capability`).
 */

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
  /**
   * How the points came about: all `measured`; `predicted` by the latency predictor from the
   * model's graph alone; `calibrated`: predicted relative to `measuredPoints` measured ones.
   * Absent (older records): measured.
   */
  source?: 'measured' | 'predicted' | 'calibrated';
  /** Points measured on the replica for this profile. */
  measuredPoints?: number;
  /**
   * Dilu's <request, limit> for the function (absent: request = limit, nothing lent): the smallest
   * quota whose batch latency meets the SLO at the function's base load, and the limit up to which
   * it may borrow time its neighbours leave idle (2 × request for inference, capped at 1).
   */
  requestLimit?: RequestLimit;
}

/** A function's <request, limit> quota as the profiler found it (`autoscaler/rapp/request-limit.ts`). */
export interface RequestLimit {
  /** Time quota (of one core, or of a GPU's window) that meets the SLO at `batch`, (0, 1]. */
  request: number;
  /** The most it may use, [request, 1]. */
  limit: number;
  /** Batch size the search settled on (HGSS doubles it while the SLO holds). */
  batch: number;
  /** The SLO searched against, ms (the search targets a batch latency ≤ sloMs / 2). */
  sloMs: number;
}
