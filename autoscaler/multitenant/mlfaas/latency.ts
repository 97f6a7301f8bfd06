/**
 * The latency model the mlfaas fixed-cluster controller sizes CPU with: Faro's M/D/c estimate (p99 =
 * service time + half the M/M/c waiting-time percentile, autoscaler/inference/queueing.ts) for n
 * replicas that each run at CPU quota q, so each serves a request in p / q. ρ above `rhoMax` is
 * treated as a miss (a queue that grows to the router's tail-drop limit drops requests, and a
 * dropped request is an infinitely late one).
 */
import { mdcLatencyMs } from '../../inference/queueing';
import { proxyLatencyMs, rrLatencyFactor } from './rr-model';

export interface LatencyModel {
  /** Percentile (0..1) the SLO is stated at. */
  readonly percentile: number;
  /** Largest utilisation λ·(p/q)/n we accept. */
  readonly rhoMax: number;
  /**
   * Pooling limit: n replicas behave as groups of at most poolCap that share a queue (the router hands
   * each request to the next replica in a round robin, up to 4 each, so a large job pools less than
   * one M/D/c queue would; calibrated by bench/multitenant/ours-calibrate.ts). 0 or absent: no limit.
   */
  readonly poolCap?: number;
  /**
   * 'mdc' (default): Faro's M/D/c. 'roundRobin': the per-minute p99 measured on a round-robin router
   * with 4 requests assigned per replica (rr-model.ts), at quantile `minuteQuantile` over minutes.
   */
  readonly router?: 'mdc' | 'roundRobin';
  readonly minuteQuantile?: number;
  /** roundRobin: the mean service time as a fraction of the job's declared p (1: p is the mean). */
  readonly serviceScale?: number;
  /** roundRobin: the proxy's time per request (ms, both passes). */
  readonly routerMs?: number;
}

/** Predicted percentile latency (ms) of `n` replicas at quota `q` under λ req/s; Infinity above ρmax. */
export function replicaLatencyMs(m: LatencyModel, pMs: number, lambda: number, n: number, q: number): number {
  if (n < 1 || q <= 0) return lambda > 0 ? Infinity : 0;
  const s = pMs / q;
  if (lambda <= 0) return s;
  if ((lambda * s) / 1000 / n > m.rhoMax) return Infinity;
  if (m.router === 'roundRobin') {
    const mean = s * (m.serviceScale ?? 1);
    return mean * rrLatencyFactor(n, (lambda * mean) / 1000 / n, m.minuteQuantile) + proxyLatencyMs(m.routerMs ?? 0, lambda);
  }
  const k = m.poolCap !== undefined && m.poolCap >= 1 && n > m.poolCap ? m.poolCap : n;
  return mdcLatencyMs(m.percentile, s, (lambda * k) / n, k);
}

/**
 * The smallest quota q ∈ [qMin, 1] at which `n` replicas meet `targetMs` under λ req/s (bisection:
 * latency falls as q rises), or null when even q = 1 misses.
 */
export function quotaFor(m: LatencyModel, pMs: number, lambda: number, n: number, targetMs: number, qMin: number): number | null {
  if (n < 1) return null;
  if (replicaLatencyMs(m, pMs, lambda, n, 1) > targetMs) return null;
  if (replicaLatencyMs(m, pMs, lambda, n, qMin) <= targetMs) return qMin;
  let lo = qMin;
  let hi = 1;
  for (let i = 0; i < 24 && hi - lo > 1e-4; i++) {
    const mid = (lo + hi) / 2;
    if (replicaLatencyMs(m, pMs, lambda, n, mid) <= targetMs) hi = mid;
    else lo = mid;
  }
  return hi;
}

export interface Sizing {
  readonly replicas: number;
  readonly quota: number;
  /** replicas · quota: the CPU the job takes. */
  readonly cpu: number;
}

/**
 * The cheapest (least CPU) replica count and quota meeting `targetMs` under λ, over n from the
 * fewest that can carry λ up to `maxReplicas`, quotas at least `qMin` (a lower quota serves each
 * request more slowly; the model weighs that against pooling more replicas). null when no n fits.
 */
export function cheapestSizing(m: LatencyModel, pMs: number, lambda: number, targetMs: number, qMin: number, maxReplicas: number): Sizing | null {
  const nLo = Math.max(1, Math.ceil((lambda * pMs) / 1000 / m.rhoMax - 1e-9));
  let best: Sizing | null = null;
  for (let n = nLo; n <= maxReplicas && n <= nLo + 6; n++) {
    const q = quotaFor(m, pMs, lambda, n, targetMs, qMin);
    if (q === null) continue;
    const cpu = n * q;
    if (best === null || cpu < best.cpu - 1e-9) best = { replicas: n, quota: q, cpu };
  }
  return best;
}
