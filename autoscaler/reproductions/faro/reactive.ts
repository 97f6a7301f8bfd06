import { fmt } from '../../inference/decision-helpers';
import type { CountStage } from '../../inference/stages/resize';
import type { ScalingSpec, Observation } from '../../inference/types';

/**
 * Faro's reactive baselines (EuroSys'25 Sec. 6): a job that has stayed overloaded for 30 s is
 * scaled up, one that has stayed underloaded for 5 min is scaled down (the thresholds Faro uses).
 * Overloaded: the interval's SLO-percentile latency above the SLO (or requests queued with none
 * completing). Oneshot sets the count proportional to latency/SLO; AIAD adds or removes one.
 * Replicas get a whole GPU each by default (configurable: the share stage, `fixedShare` of these
 * parameters, in autoscaler/inference/registry.ts).
 */
export const FARO_REACTIVE_DEFAULTS = { upAfterS: 30, downAfterS: 300, exclusive: true, smShare: 1, quota: 1 };

export interface ReactiveState {
  overSince: number | null;
  underSince: number | null;
}

function latencyAt(spec: ScalingSpec, obs: Observation): number {
  const l = spec.sloPercentile >= 99 ? obs.latencyMs.p99 : spec.sloPercentile >= 95 ? obs.latencyMs.p95 : obs.latencyMs.p50;
  if (Number.isNaN(l)) return obs.queueLength > 0 ? Infinity : 0;
  return l;
}

/** Count stage: oneshot sets the count proportional to latency/SLO, AIAD adds or removes one. */
export function reactiveCount(kind: 'oneshot' | 'aiad', p: typeof FARO_REACTIVE_DEFAULTS): CountStage<ReactiveState> {
  return {
    init: () => ({ overSince: null, underSince: null }),
    count(spec, state, obs, now) {
      const lat = latencyAt(spec, obs);
      const over = lat > spec.sloLatencyMs;
      let overSince = over ? (state.overSince ?? now) : null;
      let underSince = over ? null : (state.underSince ?? now);
      const n = obs.replicas.length;
      let want = n;
      let why = `${kind}: p${spec.sloPercentile} ${fmt(lat)} ms vs SLO ${spec.sloLatencyMs} ms`;
      if (overSince !== null && now - overSince >= p.upAfterS * 1000) {
        const ratio = Number.isFinite(lat) ? lat / spec.sloLatencyMs : 2;
        want = kind === 'oneshot' ? Math.max(n + 1, Math.ceil(n * ratio)) : n + 1;
        overSince = null;
        why += `, overloaded ${p.upAfterS} s`;
      } else if (underSince !== null && now - underSince >= p.downAfterS * 1000) {
        want = kind === 'oneshot' ? Math.min(n - 1, Math.ceil(n * (lat / spec.sloLatencyMs))) : n - 1;
        underSince = null;
        why += `, underloaded ${p.downAfterS} s`;
      }
      return { want, state: { overSince, underSince }, reason: why };
    },
  };
}
