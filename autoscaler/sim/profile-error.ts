/**
 * Policies plan from a profile, never from the simulator's ground truth (issue 11). A profile is a
 * second measurement of the same surface: every point off by the measurement noise, which we read
 * from the data itself (RaPP's V100 labels are single measurements): where latency is flat in the
 * SM share (≥ 55 % of the SMs), a point's log minus the mean of its two SM neighbours' logs is
 * noise, with variance 1.5·σ² for independent errors. Pure.
 */
import type { LatencyPoint } from '../rapp/profile-capability';
import { mulberry32, normal } from './rng';

/** σ of ln(latency) measurement noise, from second differences along the SM axis where latency is flat (SM ≥ minSm). */
export function estimateProfileNoise(points: readonly LatencyPoint[], minSm = 0.55): { sigma: number; n: number } {
  const rows = new Map<string, Map<number, number>>();
  for (const p of points) {
    const k = `${p.batch}|${Math.round(p.quota * 1000)}`;
    if (!rows.has(k)) rows.set(k, new Map());
    rows.get(k)!.set(Math.round(p.smShare * 1000), Math.log(p.latencyMs));
  }
  let ss = 0;
  let n = 0;
  for (const row of rows.values()) {
    const sms = [...row.keys()].sort((a, b) => a - b);
    for (let i = 1; i + 1 < sms.length; i++) {
      if (sms[i] < minSm * 1000 - 1e-6 || sms[i] - sms[i - 1] !== sms[i + 1] - sms[i]) continue;
      const d = row.get(sms[i])! - 0.5 * (row.get(sms[i - 1])! + row.get(sms[i + 1])!);
      ss += d * d;
      n++;
    }
  }
  return { sigma: n ? Math.sqrt(ss / n / 1.5) : 0, n };
}

/** The profile a deploy-time profiler would measure: each point × e^(σ·N(0,1)), seeded. */
export function remeasure(points: readonly LatencyPoint[], sigma: number, seed: number): LatencyPoint[] {
  const rand = mulberry32(seed);
  return points.map((p) => ({ ...p, latencyMs: p.latencyMs * Math.exp(sigma * normal(rand)) }));
}
