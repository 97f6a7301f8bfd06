/**
 * The latency model the live fallback controller plans with (pure): a job's requests arrive at
 * λ/s and are served by `replicas` replicas, each at the CPU quota `quota`, so one request takes
 * p / quota. The waiting time is M/D/c's, taken as half of M/M/c's (Erlang C), at the percentile
 * k: W_k = E[Wq] / Pq · ln(Pq / (1 − k/100)), as Faro's paper (Sec. 3.3) and the shared spec
 * describe it, computed by the faithful port in autoscaler/reproductions/faro/. Unlike the paper's solver (which relaxes ρ > ρ_max so its
 * continuous optimiser sees a slope), a live queue at ρ ≥ 1 grows without bound: its latency is
 * Infinity here, and the controller must drop requests or add capacity.
 */
import { mdcLatencyMs as faroMdcLatencyMs } from '../../reproductions/faro/latency';
import { linearPenalty, relaxedUtility } from '../../reproductions/faro/utility';

/**
 * The k-th percentile latency (ms) of M/D/c with c = `replicas` servers of service time `serviceMs`,
 * at `lambda` req/s: Faro's model (autoscaler/reproductions/faro/latency.ts) without its relaxation
 * above ρ_max — a live queue at ρ ≥ 1 has no finite latency.
 */
export function mdcLatencyMs(lambda: number, serviceMs: number, replicas: number, percentile: number): number {
  if (!(replicas >= 1) || !(serviceMs > 0)) return Infinity;
  if (!(lambda > 0)) return serviceMs;
  if (lambda * serviceMs / 1000 / Math.floor(replicas) >= 1) return Infinity;
  return faroMdcLatencyMs(lambda, Math.floor(replicas), serviceMs, percentile, Infinity);
}

/** The relaxed per-job utility of Faro (α = 1): min(SLO / latency, 1); 0 at infinite latency. */
export function sloUtility(latencyMs: number, sloMs: number): number {
  return Number.isFinite(latencyMs) ? relaxedUtility(latencyMs, sloMs) : 0;
}

/** Faro's drop penalty φ(d): piecewise linear through (0,0), (0.001,0), (0.03,0.25), (0.08,0.5), (1,1). */
export function dropPenalty(dropped: number): number {
  return linearPenalty(Math.min(Math.max(dropped, 0), 1));
}

/** A job's shape for the model. */
export interface ModelJob {
  processingMs: number;
  sloMs: number;
  sloPercentile: number;
  /** Offered load, req/s (dropped requests included). */
  lambda: number;
}

/** How `cores` split into replicas: whole cores first (fewer, faster servers wait less), each at cores / replicas. */
export function splitCores(cores: number): { replicas: number; quota: number } {
  const replicas = Math.max(1, Math.ceil(cores - 1e-9));
  return { replicas, quota: cores / replicas };
}

/**
 * The best utility a job reaches with `cores`, over accept rates on a grid of `acceptStep`
 * (PenaltySum: U(aλ) · (1 − φ(1 − a))), and the accept rate that reaches it (1 when none helps).
 */
export function bestUtility(j: ModelJob, cores: number, acceptStep = 0.05): { utility: number; acceptRate: number; latencyMs: number } {
  const { replicas, quota } = splitCores(cores);
  const serviceMs = j.processingMs / quota;
  let best = { utility: -1, acceptRate: 1, latencyMs: Infinity };
  for (let a = 1; a > 1e-9; a -= acceptStep) {
    const rate = Math.round(a * 1000) / 1000;
    const latencyMs = mdcLatencyMs(rate * j.lambda, serviceMs, replicas, j.sloPercentile);
    const utility = sloUtility(latencyMs, j.sloMs) * (1 - dropPenalty(1 - rate));
    if (utility > best.utility + 1e-9) best = { utility, acceptRate: rate, latencyMs };
    if (j.lambda <= 0) break;
  }
  if (best.utility <= 1e-9 && j.lambda > 0) {
    // no accept rate earns anything here: admit what the replicas carry at ρ = 0.95 (a bounded
    // queue, served late) rather than let the queue grow until every request times out
    const stable = Math.floor((0.95 * replicas * 1000 / serviceMs / j.lambda) / acceptStep) * acceptStep;
    const acceptRate = Math.min(1, Math.max(acceptStep, Math.round(stable * 1000) / 1000));
    return { utility: 0, acceptRate, latencyMs: mdcLatencyMs(acceptRate * j.lambda, serviceMs, replicas, j.sloPercentile) };
  }
  return best;
}
