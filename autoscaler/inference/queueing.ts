/**
 * Faro's latency estimators (EuroSys'25, Sec. 3.3), used to size replica counts from a
 * per-request processing time p, an arrival rate λ and a latency SLO.
 */

/** Upper-bound estimator: κ = λ·1 s requests arriving together on N replicas finish in p·κ/N. */
export function upperBoundLatencyMs(pMs: number, lambda: number, n: number): number {
  return (pMs * lambda) / n;
}

/** Erlang C: probability that an arrival waits in an M/M/c queue with offered load a = λ/μ. */
export function erlangC(c: number, a: number): number {
  if (a >= c) return 1;
  // Erlang B by the stable recurrence, then C = B / (1 − ρ(1 − B))
  let b = 1;
  for (let k = 1; k <= c; k++) b = (a * b) / (k + a * b);
  const rho = a / c;
  return b / (1 - rho * (1 - b));
}

/**
 * The k-th percentile (0..1) of M/D/c latency, ms: p plus half the M/M/c waiting-time percentile
 * (the engineering approximation Faro adopts). Infinity when ρ = pλ/N ≥ 1.
 */
export function mdcLatencyMs(k: number, pMs: number, lambda: number, n: number): number {
  const mu = 1000 / pMs;
  const a = lambda / mu;
  if (a >= n) return Infinity;
  const c = erlangC(n, a);
  const tail = 1 - k;
  const waitS = c <= tail ? 0 : Math.log(c / tail) / (n * mu - lambda);
  return pMs + (waitS * 1000) / 2;
}

/** Faro's relaxed estimate: beyond ρ_max the latency at ρ_max scaled by λ/λ_ρmax (no plateau). */
export function relaxedMdcLatencyMs(k: number, pMs: number, lambda: number, n: number, rhoMax = 0.95): number {
  const lambdaMax = (rhoMax * n * 1000) / pMs;
  if (lambda <= lambdaMax) return mdcLatencyMs(k, pMs, lambda, n);
  return (lambda / lambdaMax) * mdcLatencyMs(k, pMs, lambdaMax, n);
}

/** Fewest replicas (≤ limit) whose estimate meets the SLO. */
function fewest(est: (n: number) => number, sloMs: number, limit: number): number {
  for (let n = 1; n <= limit; n++) if (est(n) <= sloMs) return n;
  return limit;
}

export function upperBoundReplicas(pMs: number, lambda: number, sloMs: number, limit = 10000): number {
  return fewest((n) => upperBoundLatencyMs(pMs, lambda, n), sloMs, limit);
}

export function mdcReplicas(k: number, pMs: number, lambda: number, sloMs: number, limit = 10000): number {
  return fewest((n) => mdcLatencyMs(k, pMs, lambda, n), sloMs, limit);
}

/**
 * Largest arrival rate (req/s) one replica can take while the k-th percentile (0..1) of its M/D/1
 * latency (Faro's estimator with c = 1) stays within `sloMs`, for a replica that runs batches of
 * `batch` in `batchMs`. 0 when even an idle replica misses the SLO.
 */
export function sloRate(k: number, batchMs: number, batch: number, sloMs: number): number {
  if (!(batchMs > 0) || batchMs > sloMs) return 0;
  const pMs = batchMs / batch;
  const mu = 1000 / pMs;
  const t = 1 - k;
  // With one server Erlang C is ρ, so the k-th percentile latency is
  // batchMs + (pMs / 2)·ln(ρ / t) / (1 − ρ) for ρ > t (batchMs below): the SLO holds while
  // h(ρ) = ln(ρ / t) − X·(1 − ρ) ≤ 0 with X = 2·(sloMs − batchMs) / pMs. h rises and is concave,
  // so Newton's method from ρ = t climbs to the root from the feasible side.
  const rhoHi = 1 - 1e-9;
  if (mdcLatencyWithService(k, pMs, batchMs, rhoHi * mu) <= sloMs) return rhoHi * mu;
  if (!(t > 0 && t < 1)) return sloRateBisect(k, batchMs, batch, sloMs);
  const X = (2 * (sloMs - batchMs)) / pMs;
  let rho = t;
  for (let i = 0; i < 100; i++) {
    const h = Math.log(rho / t) - X * (1 - rho);
    const step = -h / (1 / rho + X);
    const next = Math.min(rhoHi, rho + step);
    if (!(next > rho) || next - rho <= 1e-15 * rho) break;
    rho = next;
  }
  return rho * mu;
}

/** sloRate by bisection on the rate (the reference the closed form is tested against). */
export function sloRateBisect(k: number, batchMs: number, batch: number, sloMs: number): number {
  if (!(batchMs > 0) || batchMs > sloMs) return 0;
  const pMs = batchMs / batch;
  let lo = 0;
  let hi = (1000 / pMs) * (1 - 1e-9);
  if (mdcLatencyWithService(k, pMs, batchMs, hi) <= sloMs) return hi;
  for (let i = 0; i < 40; i++) {
    const mid = (lo + hi) / 2;
    if (mdcLatencyWithService(k, pMs, batchMs, mid) <= sloMs) lo = mid;
    else hi = mid;
  }
  return lo;
}

/** M/D/1 latency with per-request occupancy pMs but a whole batch's `serviceMs` added. */
function mdcLatencyWithService(k: number, pMs: number, serviceMs: number, lambda: number): number {
  return mdcLatencyMs(k, pMs, lambda, 1) - pMs + serviceMs;
}

/**
 * Shared-queue latency of a function, ms: c = `n` replicas (heterogeneous, total request rate
 * `muTot` req/s at full batches) pulling batches from ONE FIFO queue, as the simulator and the
 * gateway serve them. The M/D/c engineering approximation Faro adopts (half the M/M/c waiting-time
 * percentile) with the c servers taken at their mean rate muTot / n, so Erlang C sees the offered
 * load a = λ·n / muTot and the wait tail P(W > t) = C·e^(−(muTot − λ)t); plus the slowest replica's
 * batch latency `lMaxMs` (a request may land on it, in a full batch). The k-th (0..1) percentile;
 * Infinity when λ ≥ muTot. With n = 1 this is the per-replica M/D/1 model `sloRate` inverts.
 *
 * Dynamic batching (optional `mu1Tot`, the fleet's rate with batches of one): a replica does not
 * wait to fill a batch, so under light load it runs batches of one and is busy λ/mu1Tot of the
 * time, far more than λ/muTot. The probability of waiting is then Erlang C at the unbatched load
 * a = λ·n / mu1Tot (1 once a ≥ n), while a queue, once formed, drains in full batches at
 * muTot − λ. Without mu1Tot (or mu1Tot = muTot: batch 1) it is the plain M/D/c estimate.
 */
export function sharedQueueLatencyMs(k: number, n: number, muTot: number, lMaxMs: number, lambda: number, mu1Tot = muTot): number {
  if (!(n >= 1) || !(muTot > 0)) return Infinity;
  if (lambda >= muTot) return Infinity;
  if (lambda <= 0) return lMaxMs;
  const a1 = (lambda * n) / Math.min(mu1Tot, muTot);
  const c = a1 >= n ? 1 : erlangC(n, a1);
  const tail = 1 - k;
  const waitS = c <= tail ? 0 : Math.log(c / tail) / (muTot - lambda);
  return lMaxMs + (waitS * 1000) / 2;
}

/**
 * Largest arrival rate (req/s) a shared-queue fleet (see `sharedQueueLatencyMs`) takes while its
 * k-th percentile latency stays within `sloMs`; 0 when even an idle fleet misses it (lMaxMs > sloMs).
 * The latency rises with λ, so bisection on λ ∈ [0, muTot) (`iters` halvings: relative error 2^−iters).
 */
export function sharedQueueRate(k: number, n: number, muTot: number, lMaxMs: number, sloMs: number, iters = 40, mu1Tot = muTot): number {
  if (!(n >= 1) || !(muTot > 0) || !(lMaxMs <= sloMs)) return 0;
  let lo = 0;
  let hi = muTot * (1 - 1e-9);
  if (sharedQueueLatencyMs(k, n, muTot, lMaxMs, hi, mu1Tot) <= sloMs) return hi;
  for (let i = 0; i < iters; i++) {
    const mid = (lo + hi) / 2;
    if (sharedQueueLatencyMs(k, n, muTot, lMaxMs, mid, mu1Tot) <= sloMs) lo = mid;
    else hi = mid;
  }
  return lo;
}
