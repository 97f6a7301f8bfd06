/**
 * Faro's per-job utility of a latency (Sec. 3.1) and the penalty for dropped requests (Sec. 3.2),
 * as the artifact defines them. Latencies in ms.
 */

/** Latencies below this are treated as this (avoids division by zero), ms. */
export const MIN_LATENCY_MS = 1e-4;

/** The original step utility: 1 if the latency meets the SLO, else 0. */
export function stepUtility(latencyMs: number, sloMs: number, maxValue = 1): number {
  return Math.max(latencyMs, MIN_LATENCY_MS) <= sloMs ? maxValue : 0;
}

/** The relaxed utility min((s / l)^α, 1); α = 1 in all published runs. U(∞) = 0. */
export function relaxedUtility(latencyMs: number, sloMs: number, alpha = 1, maxValue = 1): number {
  const l = Math.max(latencyMs, MIN_LATENCY_MS);
  return Math.min(Math.pow(sloMs / l, alpha), 1) * maxValue;
}

export type UtilityKind = 'relaxed' | 'step';

/** Mean utility over a series of latencies (one per predicted minute). */
export function meanUtility(latenciesMs: readonly number[], sloMs: number, kind: UtilityKind = 'relaxed', alpha = 1): number {
  if (latenciesMs.length === 0) return NaN;
  let sum = 0;
  for (const l of latenciesMs) sum += kind === 'step' ? stepUtility(l, sloMs) : relaxedUtility(l, sloMs, alpha);
  return sum / latenciesMs.length;
}

/** (drop-rate threshold, penalty) pairs, ascending. */
export type PenaltySteps = ReadonlyArray<readonly [number, number]>;

/** The solver's strict steps (the artifact's SLOStrictPenalty): ≤ 0.1 % → 0, ≤ 3 % → 0.25, ≤ 8 % → 0.5, else 1. */
export const STRICT_PENALTY_STEPS: PenaltySteps = [[0.001, 0], [0.03, 0.25], [0.08, 0.5]];
/** AWS-like steps used when reporting: ≤ 1 % → 0, ≤ 5 % → 0.25, ≤ 10 % → 0.5, else 1. */
export const AWS_PENALTY_STEPS: PenaltySteps = [[0.01, 0], [0.05, 0.25], [0.1, 0.5]];

/** Step penalty φ(v): the penalty of the first threshold v does not exceed, else 1. */
export function stepPenalty(violation: number, steps: PenaltySteps = STRICT_PENALTY_STEPS): number {
  for (const [t, p] of steps) if (violation <= t) return p;
  return 1;
}

/**
 * Piecewise-linear penalty φ(v) through (0, 0), the steps' points and (1, 1) (the artifact's
 * SLOStrictLinearPenalty with the default steps): v is clipped to [0, 1].
 */
export function linearPenalty(violation: number, steps: PenaltySteps = STRICT_PENALTY_STEPS): number {
  const pts = steps[steps.length - 1][0] === 1 && steps[steps.length - 1][1] === 1 ? [...steps] : [...steps, [1, 1] as const];
  const v = Math.min(Math.max(violation, 0), 1);
  let prevT = 0;
  let prevP = 0;
  for (const [t, p] of pts) {
    const coeff = (p - prevP) / (t - prevT);
    const intercept = (prevP * t - p * prevT) / (t - prevT);
    if (v <= t) return coeff * v + intercept;
    prevT = t;
    prevP = p;
  }
  return 1;
}
