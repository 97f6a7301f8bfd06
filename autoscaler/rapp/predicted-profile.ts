/**
 * A function's capability surface from a learned latency model (issue 12): the whole configuration
 * grid predicted in one run at deploy, before anything is measured, then calibrated to the few
 * points the profiler measures. The result is a profile (ProfileCapability answers from it), so a
 * capability query on the decision path costs what a measured profile costs. Pure but for the
 * model run.
 */
import type { LatencyPoint } from './profile-capability';
import type { LatencyModel } from './latency-model';

export interface ConfigGrid {
  batches: readonly number[];
  smShares: readonly number[];
  quotas: readonly number[];
}

/** Every (batch, SM share, quota) of the grid, predicted in one model run. */
export async function predictProfile(model: LatencyModel, grid: ConfigGrid,
  featuresOf: (batch: number, smShare: number, quota: number) => number[]): Promise<LatencyPoint[]> {
  const cfg: Array<[number, number, number]> = [];
  for (const b of grid.batches) for (const s of grid.smShares) for (const q of grid.quotas) cfg.push([b, s, q]);
  const ms = await model.predictMs(cfg.map(([b, s, q]) => featuresOf(b, s, q)));
  return cfg.map(([batch, smShare, quota], i) => ({ batch, smShare, quota, latencyMs: ms[i] }));
}

const key = (p: { batch: number; smShare: number; quota: number }) => `${p.batch}|${Math.round(p.smShare * 1e4)}|${Math.round(p.quota * 1e4)}`;

/**
 * The prediction calibrated to measured points: every predicted latency × the geometric mean of
 * measured ÷ predicted over the measured points that are on the grid (factor 1 with none), and
 * the measured points themselves in place of their predictions.
 */
export function calibrate(predicted: readonly LatencyPoint[], measured: readonly LatencyPoint[]): { points: LatencyPoint[]; factor: number; used: number } {
  const byKey = new Map(predicted.map((p) => [key(p), p]));
  let sum = 0;
  let used = 0;
  for (const m of measured) {
    const p = byKey.get(key(m));
    if (!p || !(m.latencyMs > 0) || !(p.latencyMs > 0)) continue;
    sum += Math.log(m.latencyMs / p.latencyMs);
    used++;
  }
  const factor = used ? Math.exp(sum / used) : 1;
  const got = new Map(measured.filter((m) => byKey.has(key(m)) && m.latencyMs > 0).map((m) => [key(m), m.latencyMs]));
  return { points: predicted.map((p) => ({ ...p, latencyMs: got.get(key(p)) ?? p.latencyMs * factor })), factor, used };
}
