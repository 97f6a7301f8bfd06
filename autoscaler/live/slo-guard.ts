/**
 * SLO guard (issue 10): a function whose observed p-th percentile latency (its sloPercentile)
 * exceeds its SLO for `seconds` consecutive intervals gets capacity even if the model says it has
 * enough: the lowest quota below 1 is raised (vertical first, as the hybrid policy does), else one
 * replica is added within max_scale. The count restarts after it acts, so the new capacity gets the
 * same number of seconds to show before the next step. Pure.
 */
import type { Decision, FunctionSpec, Observation } from '../inference/types';

export interface SloGuardState {
  /** Consecutive intervals over the SLO. */
  over: number;
}

/** The observed percentile closest to (not below) the SLO's: p99, p95 or p50. */
export function observedPercentile(obs: Observation, percentile: number): { label: string; ms: number } {
  if (percentile > 95) return { label: 'p99', ms: obs.latencyMs.p99 };
  if (percentile > 50) return { label: 'p95', ms: obs.latencyMs.p95 };
  return { label: 'p50', ms: obs.latencyMs.p50 };
}

/** Whether `d` already adds capacity (a replica, or a quota above the replica's current one). */
export function addsCapacity(d: Decision, obs: Observation): boolean {
  if (d.add.length > 0 || d.replicas > obs.replicas.length) return true;
  return d.quotas.some((q) => q.quota > (obs.replicas.find((r) => r.id === q.replicaId)?.quota ?? Infinity));
}

/**
 * One interval: the next state and, when the guard fires, the decision to apply instead of `d`.
 * An interval with no completions says nothing about latency and keeps the count.
 */
export function sloGuard(st: SloGuardState, spec: FunctionSpec, obs: Observation, d: Decision, seconds: number): { next: SloGuardState; decision?: Decision } {
  const { label, ms } = observedPercentile(obs, spec.sloPercentile);
  if (obs.completions <= 0 || !Number.isFinite(ms)) return { next: st };
  if (ms <= spec.sloLatencyMs) return { next: { over: 0 } };
  const over = st.over + 1;
  if (over < seconds) return { next: { over } };
  if (addsCapacity(d, obs)) return { next: { over: 0 } };
  const why = `SLO guard: ${label} ${Math.round(ms)} ms > ${spec.sloLatencyMs} ms for ${over} s`;
  const kept = obs.replicas;
  const low = [...kept].filter((r) => r.quota < 1).sort((a, b) => a.quota - b.quota)[0];
  if (low) {
    const quota = Math.min(1, Math.round(Math.max(low.quota * 2, low.quota + 0.1) * 1000) / 1000);
    const reason = `${why}: quota ${low.id} ${low.quota}→${quota}`;
    return { next: { over: 0 }, decision: { replicas: kept.length, quotas: [{ replicaId: low.id, quota }], add: [], remove: [], weights: d.remove.length ? {} : d.weights, reason } };
  }
  if (kept.length < spec.maxScale) {
    const batchSize = Math.max(1, ...kept.map((r) => r.batchSize));
    const reason = `${why}: +1 replica`;
    return { next: { over: 0 }, decision: { replicas: kept.length + 1, quotas: [], add: [{ gpu: 'new:slo-guard', smShare: 1, quota: 1, batchSize }], remove: [], weights: {}, reason } };
  }
  return { next: { over: 0 }, decision: { ...d, remove: [], replicas: Math.max(d.replicas, kept.length), reason: `${why}: at max_scale ${spec.maxScale}, nothing to add; ${d.reason}` } };
}
