/**
 * Estimation-error correction (FaPES): the scheduler predicts progress from the performance model;
 * the runtime reports real progress. The ratio real/predicted, smoothed, scales the model's
 * throughput for the job's next plans.
 */

export interface Correction {
  /** Multiplicative factor applied to predicted throughput (1 = model is right). */
  readonly factor: number;
  readonly samples: number;
}

export const NO_CORRECTION: Correction = { factor: 1, samples: 0 };

/**
 * Updates the factor with one report: `predicted` and `reported` iterations over the same interval.
 * Exponential smoothing with weight `alpha` (0.5 default); the first report replaces the prior.
 */
export function correct(prev: Correction, predicted: number, reported: number, alpha = 0.5): Correction {
  if (!(predicted > 0) || !(reported >= 0)) return prev;
  const ratio = reported / predicted;
  const factor = prev.samples === 0 ? ratio : alpha * ratio + (1 - alpha) * prev.factor;
  return { factor, samples: prev.samples + 1 };
}

/** Scales a throughput prediction by the correction. */
export function corrected(throughput: number, c: Correction): number {
  return throughput * c.factor;
}
