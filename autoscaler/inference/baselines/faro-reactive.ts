import { fmt, parseParams, resizeTo } from '../common';
import { FunctionSpec, InferencePolicy, Observation, PolicyDeps, PolicyParams } from '../types';

/**
 * Faro's reactive baselines (EuroSys'25 Sec. 6): a job that has stayed overloaded for 30 s is
 * scaled up, one that has stayed underloaded for 5 min is scaled down (the thresholds Faro uses).
 * Overloaded: the interval's SLO-percentile latency above the SLO (or requests queued with none
 * completing). Oneshot sets the count proportional to latency/SLO; AIAD adds or removes one.
 * Replicas get a whole GPU each by default (configurable).
 */
export const FARO_REACTIVE_DEFAULTS = { upAfterS: 30, downAfterS: 300, exclusive: true, smShare: 1, quota: 1 };

export interface ReactiveState {
  overSince: number | null;
  underSince: number | null;
}

function latencyAt(spec: FunctionSpec, obs: Observation): number {
  const l = spec.sloPercentile >= 99 ? obs.latencyMs.p99 : spec.sloPercentile >= 95 ? obs.latencyMs.p95 : obs.latencyMs.p50;
  if (Number.isNaN(l)) return obs.queueLength > 0 ? Infinity : 0;
  return l;
}

function reactive(kind: 'oneshot' | 'aiad') {
  return (params: PolicyParams, deps: PolicyDeps): InferencePolicy<ReactiveState> => {
    const p = parseParams(kind, FARO_REACTIVE_DEFAULTS, params);
    return {
      name: kind,
      initialState: () => ({ overSince: null, underSince: null }),
      decide(spec, state, obs, now) {
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
        const decision = resizeTo(spec, obs, deps.capability, Math.max(1, want), { exclusive: p.exclusive, smShare: p.smShare, quota: p.quota, batchSize: spec.maxBatchSize }, why);
        return { decision, nextState: { overSince, underSince }, reason: decision.reason };
      },
    };
  };
}

export const oneshot = reactive('oneshot');
export const aiad = reactive('aiad');
