/** Small statistics for repeated bench measurements (pure). */
import { mulberry32 } from '../../autoscaler/sim/rng';

export function median(xs: number[]): number {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** Nearest-rank percentile, p in [0, 1]. */
export function percentile(xs: number[], p: number): number {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(p * s.length) - 1))];
}

/** mulberry32 (the simulator's seeded PRNG), so that the reported intervals are reproducible from the samples. */
export const rng = mulberry32;

/**
 * Percentile-bootstrap 95 % interval of the median (resamples with replacement, seeded).
 * With 5 samples it spans roughly the 2nd smallest to the 2nd largest; it says how much
 * the runs disagreed, not more.
 */
export function bootstrapMedianCI(xs: number[], resamples = 2000, seed = 42): [number, number] {
  if (xs.length < 2) return [xs[0] ?? NaN, xs[0] ?? NaN];
  const r = rng(seed);
  const meds: number[] = [];
  for (let i = 0; i < resamples; i++) meds.push(median(xs.map(() => xs[Math.floor(r() * xs.length)])));
  meds.sort((a, b) => a - b);
  return [meds[Math.floor(0.025 * resamples)], meds[Math.ceil(0.975 * resamples) - 1]];
}

export interface Summary { median: number; lo: number; hi: number; n: number }

export function summarize(xs: number[]): Summary {
  const [lo, hi] = bootstrapMedianCI(xs);
  return { median: median(xs), lo, hi, n: xs.length };
}

/** "0.498 [0.494, 0.503]" */
export function fmt(s: Summary, digits = 3): string {
  return `${s.median.toFixed(digits)} [${s.lo.toFixed(digits)}, ${s.hi.toFixed(digits)}]`;
}
