import { mulberry32, normal } from '../sim/rng';
import type { MinutePredictor } from './types';

/**
 * Per-minute arrival forecasters for Faro's long-term policy (EuroSys '25, Sec. 4.4). The
 * published Faro and MArk runs used a trained N-HiTS model (darts, Gaussian likelihood, 15-minute
 * context, 50 samples, the q-quantile of the samples, clipped at 1) whose weights are not in the
 * artifact; these are the stand-ins used to rerun it:
 * - `naive`: a Gaussian random walk, last + z_q · sd(Δ of the last 15 counts) · √h, h = 1..horizon,
 *   clipped at 1 (analytic quantile);
 * - `gaussian`: the same model sampled as darts does it (`samples` paths, the q-quantile per step
 *   with linear interpolation, clipped at 1), seeded: what "Gaussian at q = 0.6" means for MArk;
 * - `oracle`: the trace's true next counts (the artifact's OraclePredictor).
 */

/** Minutes of history the models look at (the artifact's N-HiTS context length). */
export const CONTEXT_MIN = 15;

/** Standard normal quantile Φ⁻¹(q) (Acklam's rational approximation, relative error < 1.2e-9). */
export function normalQuantile(q: number): number {
  if (q <= 0) return -Infinity;
  if (q >= 1) return Infinity;
  const a = [-3.969683028665376e1, 2.209460984245205e2, -2.759285104469687e2, 1.38357751867269e2, -3.066479806614716e1, 2.506628277459239];
  const b = [-5.447609879822406e1, 1.615858368580409e2, -1.556989798598866e2, 6.680131188771972e1, -1.328068155288572e1];
  const c = [-7.784894002430293e-3, -3.223964580411365e-1, -2.400758277161838, -2.549732539343734, 4.374664141464968, 2.938163982698783];
  const d = [7.784695709041462e-3, 3.224671290700398e-1, 2.445134137142996, 3.754408661907416];
  const lo = 0.02425;
  if (q < lo || q > 1 - lo) {
    const s = Math.sqrt(-2 * Math.log(q < lo ? q : 1 - q));
    const v = (((((c[0] * s + c[1]) * s + c[2]) * s + c[3]) * s + c[4]) * s + c[5]) / ((((d[0] * s + d[1]) * s + d[2]) * s + d[3]) * s + 1);
    return q < lo ? v : -v;
  }
  const r = q - 0.5;
  const t = r * r;
  return ((((((a[0] * t + a[1]) * t + a[2]) * t + a[3]) * t + a[4]) * t + a[5]) * r) / (((((b[0] * t + b[1]) * t + b[2]) * t + b[3]) * t + b[4]) * t + 1);
}

/** Population standard deviation of successive differences of `xs`; 0 with fewer than 2 values. */
export function diffStd(xs: readonly number[]): number {
  if (xs.length < 2) return 0;
  const d: number[] = [];
  for (let i = 1; i < xs.length; i++) d.push(xs[i] - xs[i - 1]);
  const mean = d.reduce((s, v) => s + v, 0) / d.length;
  return Math.sqrt(d.reduce((s, v) => s + (v - mean) ** 2, 0) / d.length);
}

function lastContext(counts: readonly number[], context: number): number[] {
  return counts.slice(Math.max(0, counts.length - context));
}

/**
 * Whether a forecaster can answer now. The artifact's forecasters return None rather than a
 * forecast when they cannot (src/predictor.py `BasePredictor.update_history` returns
 * `len(self.history) >= self.context_len`, and `DartsPredictor.predict` returns None while it is
 * False; `OraclePredictor.predict` returns None once `current_step >= len(self.input_counts)`); the
 * policy then uses the recent counts instead (src/policy.py `BasePredictionPolicy.calculate_estimate`).
 */
export interface ArtifactForecaster extends MinutePredictor {
  available(job: number, minuteCounts: readonly number[]): boolean;
}

/** `p.forecast(...)`, or null where `p` is an ArtifactForecaster that cannot answer (see above). */
export function forecastOrNull(p: MinutePredictor, job: number, minuteCounts: readonly number[], horizon: number, q: number): readonly number[] | null {
  const avail = (p as Partial<ArtifactForecaster>).available;
  if (avail !== undefined && !avail(job, minuteCounts)) return null;
  return p.forecast(job, minuteCounts, horizon, q);
}

export function naivePredictor(context = CONTEXT_MIN): ArtifactForecaster {
  return {
    name: 'naive',
    // the artifact's model needs its context length of minutes before it forecasts (src/predictor.py update_history)
    available: (_job, minuteCounts) => minuteCounts.length >= context,
    forecast(_job, minuteCounts, horizon, q) {
      const hist = lastContext(minuteCounts, context);
      if (hist.length === 0) return [0];
      const last = hist[hist.length - 1];
      const spread = normalQuantile(q) * diffStd(hist);
      const out: number[] = [];
      for (let h = 1; h <= horizon; h++) out.push(Math.max(1, last + spread * Math.sqrt(h)));
      return out;
    },
  };
}

/** numpy's default (linear) quantile of `sorted` values. */
export function sampleQuantile(sorted: readonly number[], q: number): number {
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.min(lo + 1, sorted.length - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo);
}

export function gaussianPredictor(opts: { samples?: number; seed?: number; context?: number } = {}): ArtifactForecaster {
  const samples = opts.samples ?? 50;
  const context = opts.context ?? CONTEXT_MIN;
  const rand = mulberry32(opts.seed ?? 1);
  return {
    name: 'gaussian',
    available: (_job, minuteCounts) => minuteCounts.length >= context,
    forecast(_job, minuteCounts, horizon, q) {
      const hist = lastContext(minuteCounts, context);
      if (hist.length === 0) return [0];
      const last = hist[hist.length - 1];
      const sd = diffStd(hist);
      const paths: number[][] = [];
      for (let s = 0; s < samples; s++) {
        let level = last;
        const path: number[] = [];
        for (let h = 0; h < horizon; h++) {
          level += sd * normal(rand);
          path.push(level);
        }
        paths.push(path);
      }
      const out: number[] = [];
      for (let h = 0; h < horizon; h++) {
        const col = paths.map((p) => p[h]).sort((x, y) => x - y);
        out.push(Math.max(1, sampleQuantile(col, q)));
      }
      return out;
    },
  };
}

/**
 * The true next counts from `trace[job]` (per-minute counts from minute 0); past the end, the last
 * count seen (`available` is false there: the artifact's OraclePredictor returns None, src/predictor.py).
 */
export function oraclePredictor(trace: ReadonlyArray<readonly number[]>): ArtifactForecaster {
  return {
    name: 'oracle',
    available: (job, minuteCounts) => minuteCounts.length < trace[job].length,
    forecast(job, minuteCounts, horizon) {
      const next = trace[job].slice(minuteCounts.length, minuteCounts.length + horizon);
      if (next.length > 0) return next;
      return minuteCounts.length > 0 ? [minuteCounts[minuteCounts.length - 1]] : [0];
    },
  };
}
