import { fmt, parseParams, resizeTo } from '../common';
import { InferencePolicy, PolicyDeps, PolicyParams } from '../types';

/**
 * OpenFaaS Pro autoscaler, rps mode: desired = ⌈rps / (target · target-proportion)⌉ with the
 * documented defaults target 50 req/s per replica and proportion 0.90 (com.openfaas.scale.*
 * labels). The rate is taken over `windowS` (60 s, a Prometheus rate[1m]; our choice, the docs do
 * not give the query window). Replicas get a whole GPU each, as a Kubernetes nvidia.com/gpu: 1
 * function would.
 */
export const OPENFAAS_DEFAULTS = { target: 50, targetProportion: 0.9, windowS: 60, exclusive: true, smShare: 1, quota: 1 };

export interface OpenfaasState {
  samples: Array<[number, number]>;
}

export function openfaasRps(params: PolicyParams, deps: PolicyDeps): InferencePolicy<OpenfaasState> {
  const p = parseParams('openfaas-rps', OPENFAAS_DEFAULTS, params);
  return {
    name: 'openfaas-rps',
    initialState: () => ({ samples: [] }),
    decide(spec, state, obs, now) {
      const samples = [...state.samples.filter(([t]) => t > now - p.windowS * 1000), [now, obs.arrivals] as [number, number]];
      const span = Math.max(obs.intervalMs, Math.min(p.windowS * 1000, samples.length * obs.intervalMs));
      const rps = (samples.reduce((a, [, n]) => a + n, 0) * 1000) / span;
      const want = Math.ceil(rps / (p.target * p.targetProportion));
      const decision = resizeTo(spec, obs, deps.capability, Math.max(1, want), { exclusive: p.exclusive, smShare: p.smShare, quota: p.quota, batchSize: spec.maxBatchSize }, `openfaas-rps: ${fmt(rps)} req/s over ${p.windowS} s, target ${p.target}×${p.targetProportion}`);
      return { decision, nextState: { samples }, reason: decision.reason };
    },
  };
}
