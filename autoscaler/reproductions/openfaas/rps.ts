import { fmt } from '../../inference/decision-helpers';
import type { CountStage } from '../../inference/stages/resize';

/**
 * OpenFaaS Pro autoscaler, rps mode: desired = ⌈rps / (target · target-proportion)⌉ with the
 * documented defaults target 50 req/s per replica and proportion 0.90 (com.openfaas.scale.*
 * labels). The rate is taken over `windowS` (60 s, a Prometheus rate[1m]; our choice, the docs do
 * not give the query window). Replicas get a whole GPU each, as a Kubernetes nvidia.com/gpu: 1
 * function would (the share stage, `fixedShare` of these parameters, in autoscaler/inference/registry.ts).
 */
export const OPENFAAS_DEFAULTS = { target: 50, targetProportion: 0.9, windowS: 60, exclusive: true, smShare: 1, quota: 1 };

export interface OpenfaasState {
  samples: Array<[number, number]>;
}

/** Count stage: ⌈rps over the window / (target · proportion)⌉. */
export function openfaasRpsCount(p: typeof OPENFAAS_DEFAULTS): CountStage<OpenfaasState> {
  return {
    init: () => ({ samples: [] }),
    count(_spec, state, obs, now) {
      const samples = [...state.samples.filter(([t]) => t > now - p.windowS * 1000), [now, obs.arrivals] as [number, number]];
      const span = Math.max(obs.intervalMs, Math.min(p.windowS * 1000, samples.length * obs.intervalMs));
      const rps = (samples.reduce((a, [, n]) => a + n, 0) * 1000) / span;
      const want = Math.ceil(rps / (p.target * p.targetProportion));
      return { want, state: { samples }, reason: `openfaas-rps: ${fmt(rps)} req/s over ${p.windowS} s, target ${p.target}×${p.targetProportion}` };
    },
  };
}
