import type { ProfilePoint } from '../../gateway/providers/capability-profile';

/**
 * Measurements on a shared machine are noisy; a time quota can never make a batch faster, so for
 * each batch size latency is made non-increasing in quota (the slower of a point and any point at
 * a higher quota) and throughput recomputed to match, never above a higher quota's. Pure.
 */
export function monotone(points: readonly ProfilePoint[]): ProfilePoint[] {
  const out = points.map((p) => ({ ...p }));
  for (const b of new Set(out.map((p) => p.batch))) {
    const row = out.filter((p) => p.batch === b).sort((x, y) => y.quota - x.quota);
    let floor = 0;
    let ceiling = Infinity;
    for (const p of row) {
      if (p.latencyMs < floor) {
        // never above the point at the higher quota: the ratio's rounding alone could put it there
        p.throughput = Math.min(p.throughput * (p.latencyMs / floor), ceiling);
        p.latencyMs = floor;
      }
      floor = p.latencyMs;
      ceiling = Math.min(ceiling, p.throughput);
    }
  }
  return out;
}
