import { chooseBatch, fmt, observedRps, parseParams, resizeTo } from '../common';
import { makePredictor, upper } from '../predictors';
import { Capability, FunctionSpec, InferencePolicy, PolicyDeps, PolicyParams } from '../types';

/** The smallest (s·q) configuration whose batch-1 latency meets the SLO; the fastest if none does. */
export function profiledShare(cap: Capability, spec: FunctionSpec, quotaStep = 0.1): { smShare: number; quota: number } | undefined {
  const g = cap.grid(spec.name);
  let best: { smShare: number; quota: number; cost: number; l: number } | undefined;
  let fastest: { smShare: number; quota: number; l: number } | undefined;
  const steps = Math.max(1, Math.round(1 / quotaStep));
  for (const s of g.smShares)
    for (let k = 1; k <= steps; k++) {
      const q = Math.round((k / steps) * 1e6) / 1e6;
      const l = cap.latencyMs(spec.name, 1, s, q);
      if (!(l < Infinity)) continue;
      if (!fastest || l < fastest.l) fastest = { smShare: s, quota: q, l };
      const cost = s * q;
      if (l <= spec.sloLatencyMs && (!best || cost < best.cost - 1e-12 || (Math.abs(cost - best.cost) <= 1e-12 && l < best.l))) best = { smShare: s, quota: q, cost, l };
    }
  const c = best ?? fastest;
  return c && { smShare: c.smShare, quota: c.quota };
}

/**
 * Static fractional shares with horizontal scaling only (FaST-GShare-like): every replica of a
 * function gets one fixed SM partition and time quota, batch 1. `perModel` (default): the share
 * FaST-GShare's profiler would pick for the function — the smallest SM × quota on the profile's SM
 * grid and quota steps of `quotaStep` whose batch-1 latency meets the SLO (the faster on equal
 * share); when none does, the fastest configuration. `perModel: false`: the fixed `smShare`/`quota`
 * (HAS-GPU's FaST-GShare YAMLs, validation/fast-gshare/yaml: SM 30 %, quota 0.5, batch 1, the same
 * for every model). The count follows ⌈R / (α · capability)⌉ with the hybrid's α (0.9)
 * and scale-down cool-down (10 s), so it differs from `hybrid` only in having no vertical scaling.
 * R is the last observed rate unless `predictor` says otherwise.
 */
export const STATIC_DEFAULTS = {
  perModel: true,
  quotaStep: 0.1,
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
  const shares = new Map<string, { key: string; smShare: number; quota: number }>();
  const shareOf = (spec: FunctionSpec) => {
    if (!p.perModel) return { smShare: p.smShare, quota: p.quota };
    const key = `${spec.sloLatencyMs}|${String(deps.capability.profileKey?.(spec.name) ? 'k' : '')}`;
    let e = shares.get(spec.name);
    if (!e || e.key !== key) {
      const c = profiledShare(deps.capability, spec, p.quotaStep) ?? { smShare: p.smShare, quota: p.quota };
      shares.set(spec.name, (e = { key, ...c }));
    }
    return e;
  };
  return {
    name: 'static-share',
    initialState: () => ({ pred: predictor.init(), lastScaleDownMs: null }),
    decide(spec, state, obs, now) {
      const pred = predictor.observe(state.pred, observedRps(obs));
      const R = upper(predictor.forecast(pred), p.quantile);
      const { smShare, quota } = shareOf(spec);
      const b = chooseBatch(deps.capability, spec.name, Math.min(p.batchSize, spec.maxBatchSize), smShare, quota, Infinity);
      const per = deps.capability.capability(spec.name, b, smShare, quota);
      let want = per > 0 ? Math.ceil(R / (p.alpha * per)) : spec.maxScale;
      const n = obs.replicas.length;
      let last = state.lastScaleDownMs;
      if (want < n) {
        if (last !== null && now - last < p.cooldownS * 1000) want = n;
        else last = now;
      }
      const decision = resizeTo(spec, obs, deps.capability, Math.max(1, want), { exclusive: false, smShare, quota, batchSize: b }, `static-share (s=${smShare}, q=${quota}, b=${b}): R=${fmt(R)} req/s, ${fmt(per)} req/s per replica`);
      return { decision, nextState: { pred, lastScaleDownMs: last }, reason: decision.reason };
    },
  };
}
