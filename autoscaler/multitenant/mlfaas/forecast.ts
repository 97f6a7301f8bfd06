/**
 * Per-job arrival forecast for the fixed-cluster controller: our Kalman filter (HAS-GPU's 1-D
 * filter, autoscaler/inference/predictors.ts) over per-minute rates (req/s), with an uncertainty
 * band measured from its own one-minute-ahead errors (an exponentially weighted mean of squared
 * innovations), widened as √h for h minutes ahead (a random walk's). It sees only completed
 * minutes: no knowledge of the future.
 */
import { kalman, normalQuantile, type KalmanState } from '../../inference/predictors';

export interface ForecastParams {
  /** Kalman process noise Q ((req/s)²). */
  readonly processNoise: number;
  /** Kalman measurement noise R ((req/s)²). */
  readonly measurementNoise: number;
  /** Weight of the newest squared error in the error variance (0..1). */
  readonly errorWeight: number;
  /** The error standard deviation (req/s) assumed before any error is seen. */
  readonly initialStd: number;
}

export interface JobForecast {
  readonly filter: KalmanState;
  /** Completed minutes consumed so far. */
  readonly seen: number;
  /** Exponentially weighted mean of squared one-minute-ahead errors ((req/s)²). */
  readonly errVar: number;
  /** The last completed minute's rate (req/s); NaN before the first. */
  readonly last: number;
}

export function freshForecast(p: ForecastParams): JobForecast {
  return { filter: { x: NaN, cov: NaN }, seen: 0, errVar: p.initialStd * p.initialStd, last: NaN };
}

/** Consumes the minutes of `minuteCounts` not seen yet. */
export function observeMinutes(p: ForecastParams, s: JobForecast, minuteCounts: readonly number[]): JobForecast {
  if (minuteCounts.length <= s.seen) return s;
  const kf = kalman({ processNoise: p.processNoise, measurementNoise: p.measurementNoise });
  let { filter, errVar, last } = s;
  for (let m = s.seen; m < minuteCounts.length; m++) {
    const rate = minuteCounts[m] / 60;
    if (!Number.isNaN(filter.x)) {
      const err = rate - kf.forecast(filter).mean;
      errVar = (1 - p.errorWeight) * errVar + p.errorWeight * err * err;
    }
    filter = kf.observe(filter, rate);
    last = rate;
  }
  return { filter, seen: minuteCounts.length, errVar, last };
}

/** Mean rate (req/s) expected h minutes ahead; NaN before the first minute. */
export function meanRate(s: JobForecast): number {
  return Number.isNaN(s.filter.x) ? NaN : Math.max(0, s.filter.x);
}

/** The rate at z standard deviations above the mean, h minutes ahead (never below 0). */
export function rateAt(s: JobForecast, z: number, h: number): number {
  const mean = meanRate(s);
  if (Number.isNaN(mean)) return NaN;
  return Math.max(0, mean + z * Math.sqrt(s.errVar * Math.max(1, h)));
}

/** The rate at forecast quantile `q` (0..1), h minutes ahead. */
export function rateAtQuantile(s: JobForecast, q: number, h: number): number {
  return rateAt(s, q === 0.5 ? 0 : normalQuantile(q), h);
}
