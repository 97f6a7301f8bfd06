import { chooseBatch, fmt, observedRps, parseParams, resizeTo } from '../common';
import { makePredictor, upper } from '../predictors';
import { InferencePolicy, PolicyDeps, PolicyParams } from '../types';

/**
 * Static fractional shares with horizontal scaling only (FaST-GShare-like): every replica gets a
 * fixed SM partition and time quota (HAS-GPU's FaST-GShare setup, validation/fast-gshare/yaml:
 * SM 30 %, quota 0.5, batch 1); the count follows ⌈R / (α · capability)⌉ with the hybrid's α (0.9)
 * and scale-down cool-down (10 s), so it differs from `hybrid` only in having no vertical scaling.
 * R is the last observed rate unless `predictor` says otherwise.
 */
export const STATIC_DEFAULTS = {
  smShare: 0.3,
  quota: 0.5,
  batchSize: 1,
  alpha: 0.9,
  cooldownS: 10,
  predictor: 'last-value',
  quantile: 0.5,
};

export interface StaticState {
  pred: unknown;
  lastScaleDownMs: number | null;
}

export function staticShare(params: PolicyParams, deps: PolicyDeps): InferencePolicy<StaticState> {
  const p = parseParams('static-share', STATIC_DEFAULTS, params);
  const predictor = makePredictor(p.predictor);
  return {
    name: 'static-share',
    initialState: () => ({ pred: predictor.init(), lastScaleDownMs: null }),
    decide(spec, state, obs, now) {
      const pred = predictor.observe(state.pred, observedRps(obs));
      const R = upper(predictor.forecast(pred), p.quantile);
      const b = chooseBatch(deps.capability, spec.name, Math.min(p.batchSize, spec.maxBatchSize), p.smShare, p.quota, Infinity);
      const per = deps.capability.capability(spec.name, b, p.smShare, p.quota);
      let want = per > 0 ? Math.ceil(R / (p.alpha * per)) : spec.maxScale;
      const n = obs.replicas.length;
      let last = state.lastScaleDownMs;
      if (want < n) {
        if (last !== null && now - last < p.cooldownS * 1000) want = n;
        else last = now;
      }
      const decision = resizeTo(spec, obs, deps.capability, Math.max(1, want), { exclusive: false, smShare: p.smShare, quota: p.quota, batchSize: b }, `static-share (s=${p.smShare}, q=${p.quota}, b=${b}): R=${fmt(R)} req/s, ${fmt(per)} req/s per replica`);
      return { decision, nextState: { pred, lastScaleDownMs: last }, reason: decision.reason };
    },
  };
}
