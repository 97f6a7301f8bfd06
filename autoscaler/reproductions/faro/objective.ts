import { fmax, fmin, INF } from './cobyla-linalg';
import { mdcLatencyMs, linearLatencyMs, DEFAULT_MAX_RHO } from './latency';
import { linearPenalty, stepPenalty, STRICT_PENALTY_STEPS, MIN_LATENCY_MS } from './utility';

/**
 * Faro's cluster objectives (Sec. 3.2) as the artifact's solver evaluates them. The decision
 * vector is the replica counts x (n jobs), followed, for the penalty variants, by the accept rates
 * in percent (the artifact's `drop_integrality`: COBYLA moves them in [0, 100]). Lower is better.
 */

/** Sum in numpy's order (pairwise with 8 accumulators from 8 terms on), so ties break as the artifact's do. */
export function npSum(a: readonly number[]): number {
  const n = a.length;
  if (n < 8) {
    let s = 0;
    for (const v of a) s += v;
    return s;
  }
  const r = a.slice(0, 8);
  let i = 8;
  for (; i < n - (n % 8); i += 8) for (let j = 0; j < 8; j++) r[j] += a[i + j];
  let s = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
  for (; i < n; i++) s += a[i];
  return s;
}

export type FaroObjectiveName = 'sum' | 'fair' | 'fairsum' | 'penaltysum' | 'penaltyfairsum';

/** 0: −Σ U; 1: −Σ U − (min U − max U); 2: … − (min − max + 1); 3 (FairSum): … − J·(min − max + 1). */
export type MinMaxMode = 0 | 1 | 2 | 3;

export interface FaroProblem {
  /** Predicted arrival rate, req/s, per job (rows) and minute (columns; rows padded with 0 to one length). */
  readonly rates: readonly (readonly number[])[];
  /** Current replicas per job (x⁰). */
  readonly x0: readonly number[];
  /** Current accept rates in [0, 1] (penalty variants); default 1. */
  readonly acceptRate0?: readonly number[];
  readonly processingMs: readonly number[];
  readonly sloMs: readonly number[];
  /** M/D/c percentile (99); ≤ 0 uses the linear model λ/x·p. */
  readonly percentile: number;
  readonly maxRho: number;
  /** Total replicas R (one unit per replica). */
  readonly capacity: number;
  /**
   * Minutes a job being scaled up keeps x⁰ (cold start; the artifact: ⌊65 s / 60 s⌋ = 1), halved
   * (integer) when the cluster has spare replicas now (R − Σx⁰ > 0).
   */
  readonly upscaleOverheadMin: number;
  readonly utility: 'relaxed' | 'step';
  readonly utilityWeight: number;
  readonly minMax: MinMaxMode;
  readonly withDrop: boolean;
  /** φ piecewise linear (the artifact's `linear_penalty`) rather than steps. */
  readonly linearPenalty: boolean;
  /** Paper Eq. 3: the admitted rate a·λ enters the latency model. The artifact does not (false). */
  readonly scaleRateByAccept: boolean;
}

export const OBJECTIVE_PRESETS: Record<FaroObjectiveName, Pick<FaroProblem, 'minMax' | 'utilityWeight' | 'withDrop' | 'linearPenalty'>> = {
  sum: { minMax: 0, utilityWeight: 1, withDrop: false, linearPenalty: false },
  // the artifact's faro_fair.yaml: min_max true with utility_weight 0 (only the spread counts)
  fair: { minMax: 1, utilityWeight: 0, withDrop: false, linearPenalty: false },
  fairsum: { minMax: 3, utilityWeight: 1, withDrop: false, linearPenalty: false },
  penaltysum: { minMax: 0, utilityWeight: 1, withDrop: true, linearPenalty: true },
  penaltyfairsum: { minMax: 3, utilityWeight: 1, withDrop: true, linearPenalty: true },
};

/** The cold-start overhead in minutes in effect for this problem. */
export function effectiveOverhead(p: FaroProblem): number {
  let used = 0;
  for (const v of p.x0) used += v;
  return p.capacity - used > 0 ? Math.floor(p.upscaleOverheadMin / 2) : p.upscaleOverheadMin;
}

/** Per-job utilities U_i (mean over the predicted minutes), penalised by drops for the penalty variants. */
export function jobUtilities(p: FaroProblem, v: readonly number[], overhead = effectiveOverhead(p)): number[] {
  const n = p.x0.length;
  const dim = p.rates.length > 0 ? p.rates[0].length : 0;
  const useOverhead = overhead > 0 && overhead < dim;
  // the artifact computes every latency as infinite when any replica count it would use is ≤ 0
  let anyNonPositive = false;
  for (let i = 0; i < n; i++) {
    if (!(v[i] > 0)) anyNonPositive = true;
    if (useOverhead && v[i] > p.x0[i] && !(p.x0[i] > 0)) anyNonPositive = true;
  }
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const accept = p.withDrop ? v[n + i] / 100 : 1;
    // numpy's mean: a plain running sum below 8 terms, pairwise from 8 on
    const terms: number[] | null = dim >= 8 ? [] : null;
    let acc = 0;
    for (let j = 0; j < dim; j++) {
      const x = useOverhead && j < overhead && v[i] > p.x0[i] ? p.x0[i] : v[i];
      const rate = p.scaleRateByAccept ? p.rates[i][j] * fmin(fmax(accept, 0), 1) : p.rates[i][j];
      let l = INF;
      if (!anyNonPositive) {
        l = p.percentile > 0 ? mdcLatencyMs(rate, x, p.processingMs[i], p.percentile, p.maxRho) : linearLatencyMs(rate, x, p.processingMs[i]);
      }
      l = fmax(l, MIN_LATENCY_MS);
      const uj = p.utility === 'step' ? (l <= p.sloMs[i] ? 1 : 0) : fmin(p.sloMs[i] / l, 1);
      if (terms) terms.push(uj);
      else acc += uj;
    }
    let u = (terms ? npSum(terms) : acc) / dim;
    if (p.withDrop) {
      const violation = fmax(0, fmin(1 - accept, 1));
      u *= 1 - (p.linearPenalty ? linearPenalty(violation, STRICT_PENALTY_STEPS) : stepPenalty(violation, STRICT_PENALTY_STEPS));
    }
    out.push(u);
  }
  return out;
}

/** The objective value of v (lower is better) and the utilities it came from. */
export function evaluate(p: FaroProblem, v: readonly number[], overhead = effectiveOverhead(p)): { value: number; utilities: number[] } {
  const u = jobUtilities(p, v, overhead);
  let min = INF;
  let max = -INF;
  for (const x of u) {
    min = fmin(min, x);
    max = fmax(max, x);
  }
  let value = -npSum(u.map((x) => p.utilityWeight * x));
  if (p.minMax === 1) value -= min - max;
  else if (p.minMax === 2) value -= min - max + 1;
  else if (p.minMax === 3) value -= (min - max + 1) * u.length;
  return { value, utilities: u };
}

export function objectiveFn(p: FaroProblem): (v: readonly number[]) => number {
  const overhead = effectiveOverhead(p);
  return (v) => evaluate(p, v, overhead).value;
}

/** Defaults of the published simulation (p = 180 ms, s = 720 ms, p99, ρ_max 0.95, 65 s cold start on 60 s bins). */
export const FARO_SIM_DEFAULTS = { processingMs: 180, sloMs: 720, percentile: 99, maxRho: DEFAULT_MAX_RHO, upscaleOverheadMin: 1 };
