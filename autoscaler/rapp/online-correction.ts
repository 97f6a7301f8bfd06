/**
 * Closed-loop correction of a function's capability model (issue 10). A profile measured inside the
 * replica (model time) overstated what it serves end to end (HTTP, JSON, the gateway's queue):
 * 75,000 req/s by the profile, ~600 observed; the end-to-end profile is closer, not exact. Each second the live loop compares
 * what it saw with what the uncorrected model predicts for the replicas' configurations and moves a
 * per-function multiplicative factor k (capability × k, latency ÷ k) toward the observed ratio: an
 * EWMA in log space, clamped to [1/50, 2], so one noisy second moves it little and it can neither
 * collapse nor run away. Pure.
 */
import type { Capability, Observation } from '../inference/types';

export const CORRECTION = { min: 1 / 50, max: 2, gain: 0.2 } as const;

/** ln k; 0 (k = 1) before any evidence. */
export type LogFactor = number;

/**
 * How a quota shows in an idle replica's latency. `full-speed`: the quota is a budget per period
 * (CFS bandwidth, tokend's windows: every enforcement this platform has), so a request that finds
 * the replica idle runs at full speed and only a saturated replica is slowed to its quota: the
 * latency evidence is compared with the model's latency at quota 1, or the correction would read
 * the budget's burst as spare capacity (bench:live: k went to 2 on image-classify at quota 0.6,
 * whose saturated capacity is the profile's, and bursts missed the SLO). `at-quota`: latency is
 * the profile's at the quota whatever the load (the simulator's GPU profiles, RaPP-measured).
 */
export type LatencyEvidence = 'full-speed' | 'at-quota';

/**
 * One step. Evidence, from the ready replicas with the *uncorrected* model `base`:
 * - latency, when nothing waits in the gateway queue: the predicted latency of one request
 *   (batch 1 at the replica's share, at quota 1 or at its quota: `evidence`) over the observed median;
 * - throughput, when requests wait (the replicas are saturated): observed completions per ready
 *   replica per second over the predicted capability at its batch.
 * Under saturation both apply and the smaller (more pessimistic) wins. No completions: no change.
 */
export function correctionStep(prev: LogFactor, fn: string, obs: Observation, base: Capability, evidence: LatencyEvidence,
  gain: number = CORRECTION.gain): LogFactor {
  const ready = obs.replicas.filter((r) => r.ready);
  if (ready.length === 0 || obs.completions <= 0) return prev;
  const ratios: number[] = [];
  if (obs.queueLength === 0 && Number.isFinite(obs.latencyMs.p50) && obs.latencyMs.p50 > 0) {
    let pred = 0;
    for (const r of ready) pred += base.latencyMs(fn, 1, r.smShare, evidence === 'full-speed' ? 1 : r.quota);
    pred /= ready.length;
    if (Number.isFinite(pred) && pred > 0) ratios.push(pred / obs.latencyMs.p50);
  }
  if (obs.queueLength > 0) {
    let pred = 0;
    let seen = 0;
    for (const r of ready) {
      pred += base.capability(fn, r.batchSize, r.smShare, r.quota);
      seen += r.throughputRps;
    }
    if (pred > 0 && seen > 0) ratios.push(seen / pred);
  }
  if (ratios.length === 0) return prev;
  const target = Math.log(Math.min(...ratios));
  const next = prev + gain * (target - prev);
  return Math.min(Math.log(CORRECTION.max), Math.max(Math.log(CORRECTION.min), next));
}

/** k quantised to 5 % steps in log space, so policies' per-profile caches are not rebuilt every second. */
export function quantise(logK: LogFactor): number {
  return Math.exp(Math.round(logK / 0.05) * 0.05);
}
