import { chooseBatch, fmt, observedRps, parseParams, resizeTo } from '../common';
import { lazyIn, lazyOut, pushSample } from '../lazy';
import { InferencePolicy, PolicyDeps, PolicyParams } from '../types';

/**
 * Dilu with horizontal scaling only (its lazy scale-out/in without fast vertical scaling): fixed
 * fractional replicas (same share as `static-share` by default), a 40 s window of RPS samples;
 * out when ≥ ϕ_out = 20 samples exceed the deployed throughput (to the count the window's mean
 * over-capacity sample needs), in by one when ≥ ϕ_in = 30 samples are below the throughput of
 * n − 1; the window is cleared after each action.
 */
export const DILU_DEFAULTS = { windowS: 40, phiOut: 20, phiIn: 30, smShare: 0.3, quota: 0.5, batchSize: 1 };

export interface DiluState {
  samples: number[];
}

export function diluHorizontal(params: PolicyParams, deps: PolicyDeps): InferencePolicy<DiluState> {
  const p = parseParams('dilu-horizontal', DILU_DEFAULTS, params);
  return {
    name: 'dilu-horizontal',
    initialState: () => ({ samples: [] }),
    decide(spec, state, obs) {
      let samples = pushSample(state.samples, observedRps(obs), p, obs.intervalMs / 1000);
      const b = chooseBatch(deps.capability, spec.name, Math.min(p.batchSize, spec.maxBatchSize), p.smShare, p.quota, Infinity);
      const per = deps.capability.capability(spec.name, b, p.smShare, p.quota);
      const n = obs.replicas.length;
      let want = n;
      let why = `dilu-horizontal: ${fmt(per)} req/s per replica, window ${samples.length} s`;
      if (per > 0 && lazyOut(samples, n * per, p)) {
        const hot = samples.filter((s) => s > n * per);
        want = Math.max(n + 1, Math.ceil(hot.reduce((a, s) => a + s, 0) / hot.length / per));
        samples = [];
        why += `, ${hot.length} samples above ${fmt(n * per)} req/s`;
      } else if (n > 1 && lazyIn(samples, (n - 1) * per, p)) {
        want = n - 1;
        samples = [];
        why += `, window below ${fmt((n - 1) * per)} req/s`;
      }
      const decision = resizeTo(spec, obs, deps.capability, Math.max(1, want), { exclusive: false, smShare: p.smShare, quota: p.quota, batchSize: b }, why);
      return { decision, nextState: { samples }, reason: decision.reason };
    },
  };
}
