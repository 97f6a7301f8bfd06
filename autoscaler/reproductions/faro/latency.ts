/**
 * Faro's latency model (EuroSys '25 Sec. 3.3, as the artifact computes it): the k-th percentile
 * latency of a job served by N replicas is estimated with an M/D/c queue, taken as half the
 * M/M/c waiting time plus the service time. N may be fractional while the solver runs (the
 * Erlang sum runs to ⌊N⌋ while ρ uses N). Above ρ_max the queue is unstable or nearly so; the
 * artifact then evaluates the model at the largest arrival rate λ′ = ρ_max·N/p it accepts and
 * scales the result up by λ/λ′ (the "relaxation"), so the estimate keeps growing with λ.
 */

import { fmax, ln, trunc } from './cobyla-linalg';

/** Used in place of a zero probability of queueing (the artifact's ε). */
export const QUEUE_PROB_EPSILON = 1e-4;
export const DEFAULT_MAX_RHO = 0.95;

export interface MmcTerms {
  /** Probability that an arrival waits (Erlang C). */
  queueProb: number;
  /** Mean waiting time in the queue, s. */
  meanWaitS: number;
}

/** M/M/c terms for arrival rate `lambda` (req/s), service rate `mu` (1/s), `c` servers (may be fractional). */
export function mmcTerms(lambda: number, mu: number, c: number): MmcTerms {
  const rho = lambda / mu / c;
  const a = lambda / mu;
  let power = 1;
  let factor = 1;
  let preSum = 1;
  const n = trunc(c);
  for (let i = 1; i <= n; i++) {
    power *= a;
    factor /= i;
    preSum += power * factor;
  }
  const finalTerm = power * factor;
  preSum -= finalTerm;
  const p0 = 1 / (preSum + finalTerm / (1 - rho));
  const queueProb = 1 - preSum * p0;
  return { queueProb, meanWaitS: queueProb / (c * mu - lambda) };
}

/** k-th percentile (0 < k < 100) of the M/M/c waiting time, s; never negative. */
export function mmcPercentileWaitS(t: MmcTerms, percentile: number): number {
  const q = t.queueProb === 0 ? QUEUE_PROB_EPSILON : t.queueProb;
  return fmax(0, (t.meanWaitS / q) * ln((100 * q) / (100 - percentile)));
}

/**
 * Faro's M/D/c latency estimate, ms, for `lambda` req/s on `replicas` replicas of service time
 * `processingMs`, at `percentile` (e.g. 99; a negative percentile gives the mean). Infinity when
 * `replicas` ≤ 0. Above `maxRho` the relaxation described at the top of this file applies.
 */
export function mdcLatencyMs(lambda: number, replicas: number, processingMs: number, percentile: number, maxRho = DEFAULT_MAX_RHO): number {
  if (!(replicas > 0)) return Infinity;
  const p = processingMs / 1e3;
  let rate = lambda;
  let weight = 1;
  const rho = (rate / replicas) * p;
  if (rho > maxRho) {
    const expected = (maxRho * replicas) / p;
    weight = expected / rate;
    rate = expected;
  }
  // mmcTerms and mmcPercentileWaitS inlined (no allocation: the solver calls this ~10⁵ times per decision)
  const mu = 1 / p;
  const a = rate / mu;
  const r = rate / mu / replicas;
  let power = 1;
  let factor = 1;
  let preSum = 1;
  const n = trunc(replicas);
  for (let i = 1; i <= n; i++) {
    power *= a;
    factor /= i;
    preSum += power * factor;
  }
  const finalTerm = power * factor;
  preSum -= finalTerm;
  const p0 = 1 / (preSum + finalTerm / (1 - r));
  const queueProb = 1 - preSum * p0;
  const meanWaitS = queueProb / (replicas * mu - rate);
  let waitS = meanWaitS;
  if (percentile >= 0) {
    const q = queueProb === 0 ? QUEUE_PROB_EPSILON : queueProb;
    waitS = fmax(0, (meanWaitS / q) * ln((100 * q) / (100 - percentile)));
  }
  return ((waitS / 2 + p) / weight) * 1e3;
}

/**
 * The upper-bound ("linear") model MArk-like policies use: replicas so that λ·p per replica stays
 * within the SLO, ⌈λ·p / s⌉ (λ in req/s, p and s in ms, as the artifact writes it).
 */
export function upperBoundReplicas(lambda: number, processingMs: number, sloMs: number): number {
  return Math.ceil((lambda * processingMs) / sloMs);
}

/** The artifact's linear latency model used when no M/D/c percentile is set: λ/N·p, ms. */
export function linearLatencyMs(lambda: number, replicas: number, processingMs: number): number {
  return (lambda / replicas) * processingMs;
}
