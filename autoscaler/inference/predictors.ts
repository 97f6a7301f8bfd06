import KalmanFilter from 'kalmanjs';
import { Forecast, Predictor } from './types';

/** Predicts the last observed rate. */
export const lastValue: Predictor<{ last: number }> = {
  name: 'last-value',
  init: () => ({ last: 0 }),
  observe: (_s, rps) => ({ last: rps }),
  forecast: (s) => ({ mean: s.last, std: 0 }),
};

/** Mean and standard deviation of the last `window` observations. */
export function movingAverage(window = 10): Predictor<{ values: number[] }> {
  if (!(window >= 1)) throw new Error(`moving-average: window must be ≥ 1, got ${window}`);
  return {
    name: 'moving-average',
    init: () => ({ values: [] }),
    observe: (s, rps) => ({ values: [...s.values.slice(s.values.length >= window ? 1 : 0), rps] }),
    forecast: (s) => {
      const n = s.values.length;
      if (n === 0) return { mean: 0, std: 0 };
      let sum = 0;
      for (const v of s.values) sum += v;
      const mean = sum / n;
      let sq = 0;
      for (const v of s.values) sq += (v - mean) * (v - mean);
      return { mean, std: Math.sqrt(sq / n) };
    },
  };
}

export interface KalmanParams {
  /** Process noise Q of HAS-GPU Sec. 3.3 ((req/s)²); the authors' controller uses 1. */
  processNoise: number;
  /** Measurement noise D (R in the authors' code) ((req/s)²); the authors' controller uses 10. */
  measurementNoise: number;
  /** State transition A (1: random walk). */
  a: number;
}

export interface KalmanState {
  /** Posterior estimate R (req/s); NaN before the first observation. */
  x: number;
  /** Posterior covariance P. */
  cov: number;
}

/**
 * HAS-GPU's 1-D Kalman filter (Sec. 3.3: R'ₜ = A·Rₜ₋₁, P'ₜ = A·Pₜ₋₁·Aᵀ + Q, K = P'H/(HP'Hᵀ + D),
 * R = R' + K(Rₜ − HR'), P = (1 − KH)P'), run by `kalmanjs` and kept pure by restoring its state
 * each step. The forecast's std is that of the next observation, √(A·P·A + Q + D), so a policy can
 * provision for an upper quantile mean + z·std.
 */
export function kalman(params: Partial<KalmanParams> = {}): Predictor<KalmanState> {
  const p: KalmanParams = { processNoise: 1, measurementNoise: 10, a: 1, ...params };
  for (const [k, v] of Object.entries(p)) if (!(Number.isFinite(v) && v >= 0)) throw new Error(`kalman: ${k} must be a number ≥ 0, got ${v}`);
  // kalmanjs: R is process noise, Q is measurement noise, C is H.
  const kf = new KalmanFilter({ R: p.processNoise, Q: p.measurementNoise, A: p.a, C: 1 });
  return {
    name: 'kalman',
    init: () => ({ x: NaN, cov: NaN }),
    observe: (s, rps) => {
      kf.x = s.x;
      kf.cov = s.cov;
      kf.filter(rps);
      return { x: kf.x, cov: kf.cov };
    },
    forecast: (s) => {
      if (Number.isNaN(s.x)) return { mean: 0, std: Math.sqrt(p.measurementNoise) };
      const mean = p.a * s.x;
      return { mean: Math.max(0, mean), std: Math.sqrt(p.a * s.cov * p.a + p.processNoise + p.measurementNoise) };
    },
  };
}

/** A predictor by name: `kalman`, `last-value`, `moving-average`. */
export function makePredictor(name: string, params: Record<string, unknown> = {}): Predictor<any> {
  switch (name) {
    case 'kalman':
      return kalman({
        ...(params.processNoise !== undefined ? { processNoise: Number(params.processNoise) } : {}),
        ...(params.measurementNoise !== undefined ? { measurementNoise: Number(params.measurementNoise) } : {}),
      });
    case 'last-value':
      return lastValue;
    case 'moving-average':
      return movingAverage(params.window !== undefined ? Number(params.window) : 10);
    default:
      throw new Error(`unknown predictor "${name}" (kalman, last-value, moving-average)`);
  }
}

/** Inverse of the standard normal CDF (Acklam's rational approximation, |error| < 1.2e-9). */
export function normalQuantile(p: number): number {
  if (!(p > 0 && p < 1)) throw new Error(`normalQuantile: p must be in (0, 1), got ${p}`);
  const a = [-39.69683028665376, 220.9460984245205, -275.9285104469687, 138.357751867269, -30.66479806614716, 2.506628277459239];
  const b = [-54.47609879822406, 161.5858368580409, -155.6989798598866, 66.80131188771972, -13.28068155288572];
  const c = [-0.007784894002430293, -0.3223964580411365, -2.400758277161838, -2.549732539343734, 4.374664141464968, 2.938163982698783];
  const d = [0.007784695709041462, 0.3224671290700398, 2.445134137142996, 3.754408661907416];
  const lo = 0.02425;
  if (p < lo) {
    const q = Math.sqrt(-2 * Math.log(p));
    return (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) / ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  }
  if (p > 1 - lo) return -normalQuantile(1 - p);
  const q = p - 0.5;
  const r = q * q;
  return ((((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q) / (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
}

/** The `quantile` (0..1) upper bound of a forecast, never below 0. */
export function upper(f: Forecast, quantile: number): number {
  if (quantile === 0.5) return Math.max(0, f.mean);
  return Math.max(0, f.mean + normalQuantile(quantile) * f.std);
}
