import { chooseBatch, fmt, observedRps } from '../decision-helpers';
import { makePredictor, upper } from '../predictors';
import type { CountStage, ShareStage } from '../stages/resize';
import type { Capability, ScalingSpec } from '../types';

/** How FaST-GShare's profiler picks a function's fixed share; see `STATIC_DEFAULTS`. */
export type ShareSelect = 'rpr' | 'smallest';

/**
 * The function's fixed (SM share, quota) from its profile, on the profile's SM grid and quota
 * steps of `quotaStep`. 'rpr' (FaST-GShare's profiler): the most efficient configuration, the
 * largest batch-1 throughput per unit of resource (s·q), among those whose batch-1 latency is at
 * most `headroom` × the SLO. 'smallest': the smallest s·q whose batch-1 latency meets the SLO.
 * The fastest configuration when none qualifies.
 */
export function profiledShare(cap: Capability, spec: ScalingSpec, quotaStep = 0.1, select: ShareSelect = 'smallest',
  headroom = 1): { smShare: number; quota: number } | undefined {
  const g = cap.grid(spec.name);
  let best: { smShare: number; quota: number; key: number; l: number } | undefined;
  let fastest: { smShare: number; quota: number; l: number } | undefined;
  const steps = Math.max(1, Math.round(1 / quotaStep));
  const limit = select === 'rpr' ? headroom * spec.sloLatencyMs : spec.sloLatencyMs;
  for (const s of g.smShares)
    for (let k = 1; k <= steps; k++) {
      const q = Math.round((k / steps) * 1e6) / 1e6;
      const l = cap.latencyMs(spec.name, 1, s, q);
      if (!(l < Infinity)) continue;
      if (!fastest || l < fastest.l) fastest = { smShare: s, quota: q, l };
      if (l > limit) continue;
      // rpr: maximise throughput per resource (minimise its negative); smallest: minimise s·q
      const key = select === 'rpr' ? -cap.capability(spec.name, 1, s, q) / (s * q) : s * q;
      if (!best || key < best.key - 1e-12 || (Math.abs(key - best.key) <= 1e-12 && l < best.l)) best = { smShare: s, quota: q, key, l };
    }
  const c = best ?? fastest;
  return c && { smShare: c.smShare, quota: c.quota };
}

/**
 * Static fractional shares with horizontal scaling only (FaST-GShare-like): every replica of a
 * function gets one fixed SM partition and time quota, batch 1. `perModel` (default): the share
 * FaST-GShare's profiler would pick for the function (`profiledShare`, `select`: 'rpr', the most
 * throughput per resource whose batch-1 latency is at most `headroom` × the SLO; `headroom` was
 * chosen on the tuning set as the value with the fewest static-share violations, see
 * bench/results/inference.md). `perModel: false`: the fixed `smShare`/`quota`
 * (HAS-GPU's FaST-GShare YAMLs, validation/fast-gshare/yaml: SM 30 %, quota 0.5, batch 1, the same
 * for every model). The count follows ⌈R / (α · capability)⌉ with the hybrid's α (0.9), at
 * least 1 replica, and a removal at most every 10 s (`cooldownS`). Besides having no vertical
 * scaling it differs from `hybrid` in: the forecast (R is the last observed rate, `predictor`
 * 'last-value' at quantile 0.5, not a Kalman filter's upper quantile); the SLO model (the share
 * is chosen once by its batch-1 latency against `headroom` × the SLO and a replica's capability is
 * its batch-1 throughput, where the hybrid models the replicas as one batching queue at the SLO
 * percentile); batching (it plans batch `batchSize`, 1); hysteresis (no β trigger, no scale-down
 * to a fleet fitting R/0.6, no bridge release, no scale to zero of its own); and the SLO guard
 * (a stage of the hybrid only, baselines run as published).
 */
export const STATIC_DEFAULTS = {
  perModel: true,
  quotaStep: 0.1,
  select: 'rpr' as ShareSelect,
  headroom: 0.4,
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

/** Share stage: the profiled (or fixed) share, at the largest profiled batch ≤ `batchSize`; checks the parameters. */
export function staticShareOf(p: typeof STATIC_DEFAULTS, cap: Capability): ShareStage {
  if (p.select !== 'rpr' && p.select !== 'smallest') throw new Error(`static-share: select must be rpr or smallest, got ${JSON.stringify(p.select)}`);
  if (!(p.headroom > 0 && p.headroom <= 1)) throw new Error(`static-share: headroom must be in (0, 1], got ${p.headroom}`);
  const shares = new Map<string, { key: string; smShare: number; quota: number }>();
  const shareOf = (spec: ScalingSpec) => {
    if (!p.perModel) return { smShare: p.smShare, quota: p.quota };
    const key = `${spec.sloLatencyMs}|${String(cap.profileKey?.(spec.name) ? 'k' : '')}`;
    let e = shares.get(spec.name);
    if (!e || e.key !== key) {
      const c = profiledShare(cap, spec, p.quotaStep, p.select, p.headroom) ?? { smShare: p.smShare, quota: p.quota };
      shares.set(spec.name, (e = { key, ...c }));
    }
    return e;
  };
  return {
    configOf(spec) {
      const { smShare, quota } = shareOf(spec);
      const b = chooseBatch(cap, spec.name, Math.min(p.batchSize, spec.maxBatchSize), smShare, quota, Infinity);
      return { exclusive: false, smShare, quota, batchSize: b };
    },
  };
}

/** Count stage: ⌈R / (α · a replica's capability)⌉ on the forecast R, a removal at most every cooldownS. */
export function staticShareCount(p: typeof STATIC_DEFAULTS, cap: Capability): CountStage<StaticState> {
  const predictor = makePredictor(p.predictor);
  return {
    init: () => ({ pred: predictor.init(), lastScaleDownMs: null }),
    count(spec, state, obs, now, cfg) {
      const pred = predictor.observe(state.pred, observedRps(obs));
      const R = upper(predictor.forecast(pred), p.quantile);
      const { smShare, quota, batchSize: b } = cfg;
      const per = cap.capability(spec.name, b, smShare, quota);
      let want = per > 0 ? Math.ceil(R / (p.alpha * per)) : spec.maxScale;
      const n = obs.replicas.length;
      let last = state.lastScaleDownMs;
      if (want < n) {
        if (last !== null && now - last < p.cooldownS * 1000) want = n;
        else last = now;
      }
      return { want, state: { pred, lastScaleDownMs: last },
        reason: `static-share (s=${smShare}, q=${quota}, b=${b}): R=${fmt(R)} req/s, ${fmt(per)} req/s per replica` };
    },
  };
}
