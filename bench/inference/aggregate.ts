/**
 * The inference headline's aggregation, fixed in code (and unit-tested) before the reporting run:
 * per seed, each ratio pools the reporting set (Σ baseline ÷ Σ ours, a zero denominator taken as
 * 1); over seeds, the mean and a two-sided 95 % Student-t interval.
 */
export interface SeedTotals {
  /** label → Σ violations, Σ requests, Σ cost over the reporting set for one seed. */
  readonly [label: string]: { violations: number; requests: number; cost: number };
}

export interface Interval {
  readonly mean: number;
  readonly lo: number;
  readonly hi: number;
  readonly n: number;
}

/** Two-sided 97.5 % quantiles of Student's t for 1..30 degrees of freedom. */
const T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.16, 2.145, 2.131, 2.12, 2.11, 2.101, 2.093, 2.086, 2.08,
  2.074, 2.069, 2.064, 2.06, 2.056, 2.052, 2.048, 2.045, 2.042];

export function meanInterval(xs: readonly number[]): Interval {
  const n = xs.length;
  if (n === 0) return { mean: NaN, lo: NaN, hi: NaN, n };
  const mean = xs.reduce((a, b) => a + b, 0) / n;
  if (n === 1) return { mean, lo: NaN, hi: NaN, n };
  const sd = Math.sqrt(xs.reduce((a, x) => a + (x - mean) ** 2, 0) / (n - 1));
  const h = (T975[Math.min(n - 2, T975.length - 1)] * sd) / Math.sqrt(n);
  return { mean, lo: mean - h, hi: mean + h, n };
}

/** Σ baseline ÷ Σ ours of one quantity for one seed (a zero denominator counts as 1). */
export function pooledRatio(t: SeedTotals, baseline: string, ours: string, k: 'violations' | 'cost'): number {
  return t[baseline][k] / Math.max(k === 'violations' ? 1 : Number.MIN_VALUE, t[ours][k]);
}

export interface Headline {
  readonly violationVsStatic: Interval;
  readonly violationVsStaticHasgpu: Interval;
  readonly costVsKpa: Interval;
  readonly kpaViolation: Interval;
}

export function headline(perSeed: readonly SeedTotals[], ours = 'hybrid'): Headline {
  const over = (f: (t: SeedTotals) => number) => meanInterval(perSeed.map(f));
  return {
    violationVsStatic: over((t) => pooledRatio(t, 'static-share', ours, 'violations')),
    violationVsStaticHasgpu: over((t) => pooledRatio(t, 'static-share-hasgpu', ours, 'violations')),
    costVsKpa: over((t) => pooledRatio(t, 'kpa', ours, 'cost')),
    kpaViolation: over((t) => pooledRatio(t, 'kpa', ours, 'violations')),
  };
}
