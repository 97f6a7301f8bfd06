import { LATENCY_BUCKETS_MS } from './types';

/** Index of the gateway histogram bucket that holds a latency of `ms`. */
export function bucketIndex(ms: number, bounds: readonly number[] = LATENCY_BUCKETS_MS): number {
  for (let i = 0; i < bounds.length; i++) if (ms <= bounds[i]) return i;
  return bounds.length - 1;
}

/**
 * The `p`-th percentile (0..100) of a bucketed latency histogram, ms, interpolating linearly inside
 * the bucket (Prometheus histogram_quantile style). The open last bucket answers its lower bound.
 * NaN when the histogram is empty.
 */
export function percentileFromHistogram(counts: readonly number[], p: number, bounds: readonly number[] = LATENCY_BUCKETS_MS): number {
  let total = 0;
  for (const c of counts) total += c;
  if (total <= 0) return NaN;
  const rank = (p / 100) * total;
  let seen = 0;
  for (let i = 0; i < counts.length; i++) {
    const c = counts[i];
    if (c > 0 && seen + c >= rank) {
      const lo = i === 0 ? 0 : bounds[i - 1];
      const hi = bounds[i];
      if (!Number.isFinite(hi)) return lo;
      return lo + (hi - lo) * Math.max(0, rank - seen) / c;
    }
    seen += c;
  }
  return bounds[bounds.length - 2];
}

/** p50/p95/p99 of a histogram, as an Observation carries them. */
export function latencyPercentiles(counts: readonly number[]): { p50: number; p95: number; p99: number } {
  return { p50: percentileFromHistogram(counts, 50), p95: percentileFromHistogram(counts, 95), p99: percentileFromHistogram(counts, 99) };
}

/**
 * How many of a histogram's requests took longer than `ms`, interpolating linearly inside the
 * bucket that holds `ms` (as percentileFromHistogram does); the open last bucket counts as over.
 */
export function countOver(counts: readonly number[], ms: number, bounds: readonly number[] = LATENCY_BUCKETS_MS): number {
  let over = 0;
  for (let i = 0; i < counts.length; i++) {
    const lo = i === 0 ? 0 : bounds[i - 1];
    const hi = bounds[i];
    if (lo >= ms) over += counts[i];
    else if (hi > ms) over += Number.isFinite(hi) ? (counts[i] * (hi - ms)) / (hi - lo) : counts[i];
  }
  return over;
}
