import type { ProfilePoint } from '../../gateway/providers/capability-profile';

/**
 * Measurements on a shared machine are noisy; a time quota can never make a batch faster, so for
 * each batch size latency is made non-increasing in quota (the slower of a point and any point at
 * a higher quota) and throughput recomputed to match. Pure.
 */
export function monotone(points: readonly ProfilePoint[]): ProfilePoint[] {
  const out = points.map((p) => ({ ...p }));
  for (const b of new Set(out.map((p) => p.batch))) {
    const row = out.filter((p) => p.batch === b).sort((x, y) => y.quota - x.quota);
    let floor = 0;
    for (const p of row) {
      if (p.latencyMs < floor) {
        p.throughput = p.throughput * (p.latencyMs / floor);
        p.latencyMs = floor;
      }
      floor = p.latencyMs;
    }
  }
  return out;
}
