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
}
