import { OBJECTIVE_PRESETS, FARO_SIM_DEFAULTS, type FaroObjectiveName, type FaroProblem } from './objective';
import { solveFaro, SOLVER_DEFAULTS, type SolveResult } from './solver';

/**
 * Faro's long-term (predictive) decision: forecasts at quantile q → solver; with the quantile loop
 * (the variants the paper reports, the artifact's `slack_resources: {cpu: 0}`), start at q = 0.6 and,
 * while q < 0.9 and the solution leaves spare replicas, keep it, raise q by 0.1 and solve again;
 * the answer is the last solution that left spare replicas (or the first one if none did).
 */

export interface FaroLongTermOptions {
  objective: FaroObjectiveName;
  /** Total replicas R. */
  capacity: number;
  processingMs?: number;
  sloMs?: number;
  percentile?: number;
  maxRho?: number;
  /** Minutes of forecast used (7). */
  horizonMin?: number;
  /** Seconds per forecast bin (60: counts per minute → req/s). */
  binS?: number;
  /** Cold-start minutes for a job being scaled up (⌊65 s / 60 s⌋ = 1). */
  upscaleOverheadMin?: number;
  quantileLoop?: boolean;
  startQuantile?: number;
  /** Spare replicas at or below which the loop stops (the artifact: 0). */
  slack?: number;
  utility?: 'relaxed' | 'step';
  /** Paper Eq. 3 (admitted rate in the latency model) instead of the artifact's behaviour. */
  scaleRateByAccept?: boolean;
  solver?: Partial<typeof SOLVER_DEFAULTS>;
}

export interface FaroJobInput {
  /** Replicas now (x⁰). */
  x0: number;
  /** Accept rate now in [0, 1] (penalty variants). */
  acceptRate?: number;
  /** Predicted request counts per bin for the next bins at forecast quantile q. */
  forecast: (q: number) => readonly number[];
}

export interface FaroLongTermDecision {
  replicas: number[];
  acceptRate?: number[];
  objective: number;
  utilities: number[];
  /** The forecast quantile of the chosen solution. */
  quantile: number;
  /** Solver runs made (one per quantile tried). */
  solves: number;
  reason: string;
}

/** Rates in req/s, rows padded with zeros to the longest forecast (as the artifact's DataFrame fill does). */
export function ratesFromForecasts(counts: ReadonlyArray<readonly number[]>, horizon: number, binS: number): number[][] {
  const rows = counts.map((c) => c.slice(0, horizon).map((v) => v / binS));
  const dim = Math.max(1, ...rows.map((r) => r.length));
  return rows.map((r) => [...r, ...new Array(dim - r.length).fill(0)]);
}

export function buildProblem(opts: FaroLongTermOptions, jobs: readonly FaroJobInput[], q: number): FaroProblem {
  const d = { ...FARO_SIM_DEFAULTS, horizonMin: 7, binS: 60, ...stripUndefined(opts) };
  const preset = OBJECTIVE_PRESETS[opts.objective];
  return {
    rates: ratesFromForecasts(jobs.map((j) => j.forecast(q)), d.horizonMin, d.binS),
    x0: jobs.map((j) => j.x0),
    acceptRate0: jobs.map((j) => j.acceptRate ?? 1),
    processingMs: jobs.map(() => d.processingMs),
    sloMs: jobs.map(() => d.sloMs),
    percentile: d.percentile,
    maxRho: d.maxRho,
    capacity: opts.capacity,
    upscaleOverheadMin: d.upscaleOverheadMin,
    utility: opts.utility ?? 'relaxed',
    scaleRateByAccept: opts.scaleRateByAccept ?? false,
    ...preset,
  };
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

const used = (s: SolveResult): number => s.replicas.reduce((a, b) => a + b, 0);

/** The long-term policy: `faroLongTerm(opts)(jobs)`. */
export function faroLongTerm(opts: FaroLongTermOptions): (jobs: readonly FaroJobInput[]) => FaroLongTermDecision {
  return (jobs) => {
    let q = opts.startQuantile ?? 0.6;
    const slack = opts.slack ?? 0;
    let sol = solveFaro(buildProblem(opts, jobs, q), opts.solver);
    let solQ = q;
    let solves = 1;
    if (opts.quantileLoop ?? true) {
      let next = sol;
      let nextQ = q;
      // q accumulates 0.1 in floating point as the artifact's does (0.6 → 0.7 → 0.7999… → 0.8999… → 0.9999…)
      for (let guard = 0; q < 0.9 && guard < 20; guard++) {
        if (opts.capacity - used(next) <= slack) break;
        sol = next;
        solQ = nextQ;
        q += 0.1;
        if (q >= 0.9) break; // the artifact solves once more here but discards the result
        nextQ = q;
        next = solveFaro(buildProblem(opts, jobs, q), opts.solver);
        solves++;
      }
    }
    const spare = opts.capacity - used(sol);
    return {
      replicas: sol.replicas,
      acceptRate: sol.acceptRate,
      objective: sol.objective,
      utilities: sol.utilities,
      quantile: solQ,
      solves,
      reason: `faro-${opts.objective}: q=${solQ.toFixed(1)} objective ${sol.objective.toFixed(4)}, ${used(sol)}/${opts.capacity} replicas`
        + (spare > 0 ? `, ${spare} spare` : '') + (spare < 0 ? ', over capacity: fewer replicas than jobs (the artifact fails here)' : '')
        + ` (${solves} solve${solves > 1 ? 's' : ''})`,
    };
  };
}
