/**
 * The hybrid policy (HAS-GPU Algorithm 1 and ours; hybrid-params.ts says where each constant comes
 * from) as a pipeline of stages (stages/): forecast → SLO model → vertical → horizontal →
 * hysteresis, and the SLO guard the live loop runs with its observations. `sloModel` picks the
 * variant, one implementation per stage (stages/variants.ts).
 */
import { ClusterOverlay } from './cluster';
import { fmt, noChange, observedRps, parseParams, weightsByCapability } from './decision-helpers';
import { idleLongEnough, idleSince } from './idle';
import { Decision, DecisionForecast, InferencePolicy, Observation, PolicyDeps, PolicyParams, QuotaChange } from './types';
import { HYBRID_DEFAULTS, HybridState, Replica } from './hybrid-params';
import { hybridStages } from './stages/variants';
import { SLO_GUARD } from './stages/slo-guard';
import type { Draft } from './stages/types';
export { HYBRID_DEFAULTS, trendSlope } from './hybrid-params';
export type { HybridParams, HybridState } from './hybrid-params';

export function hybrid(params: PolicyParams, deps: PolicyDeps): InferencePolicy<HybridState> {
  const p = parseParams('hybrid', HYBRID_DEFAULTS, params);
  const { forecast, sloModel, vertical, horizontal, hysteresis } = hybridStages(p, deps);
  const cap = deps.capability;

  return {
    name: 'hybrid',
    guard: SLO_GUARD,
    initialState: () => ({ pred: forecast.init(), lastScaleDownMs: null, samples: [] }),
    decide(spec, state, obs, now) {
      const fn = spec.name;
      const rps = observedRps(obs);
      const pred = forecast.observe(state.pred, rps);
      // Scale to zero (spec.idleToZeroMs with min_scale 0). The forecast cannot get there: with
      // nothing observed the Kalman mean goes to 0 but its upper quantile keeps z·√(P+Q+D) (P → 2.7
      // with Q=1, D=10: 1.28·3.7 ≈ 4.7 req/s at q0.9), the noise of the next observation, and the
      // R_min floor below is at least one replica. Neither is evidence of load: after the idle
      // window the decision is zero replicas; at zero with no work it holds there (the gateway
      // wakes the function on a request). Functions without idleToZeroMs are untouched.
      if (spec.minScale === 0 && spec.idleToZeroMs !== undefined) {
        const idle = idleSince(state.idleSinceMs, { arrivals: obs.arrivals, queueLength: obs.queueLength, inFlight: obs.inFlight,
          replicas: obs.replicas.length }, now);
        const quiet = obs.arrivals === 0 && obs.queueLength === 0 && obs.inFlight === 0;
        const toZero = idleLongEnough(idle, spec.idleToZeroMs, now);
        if (toZero || (obs.replicas.length === 0 && quiet)) {
          const head = `hybrid: observed ${fmt(rps)} req/s`;
          const reason = toZero
            ? `${head}; idle ${fmt((now - idle!) / 1000)} s ≥ ${fmt(spec.idleToZeroMs / 1000)} s with min_scale 0: scale to zero`
            : `${head}; at zero, idle`;
          const decision: Decision = { replicas: 0, quotas: [], add: [], remove: obs.replicas.map((r) => r.id), weights: {}, reason };
          return { decision, nextState: { ...state, pred, idleSinceMs: null }, reason };
        }
        state = { ...state, idleSinceMs: idle };
      }
      // forecast
      const { R, lead, patch: forecastPatch } = forecast.rate(pred, state, rps, obs);
      const band = forecast.band?.(pred);
      const planned: DecisionForecast | undefined = band && { rps: R, lo: band.lo, hi: band.hi, mean: band.mean, observed: rps, label: forecast.label };
      // SLO model: the function's context and the replicas' capability within the SLO
      const ctx = sloModel.ctxOf(spec);
      const replicas: Replica[] = obs.replicas.map((r) => ({ id: r.id, gpu: r.gpu, smShare: r.smShare, quota: r.quota, batchSize: r.batchSize,
        ready: r.ready }));
      let notReady = 0;
      for (const r of obs.replicas) if (!r.ready) notReady++;
      const d: Draft = {
        fn, spec, obs, now, state, rps, R, ctx, replicas,
        overlay: new ClusterOverlay(obs.cluster),
        fleet: replicas.slice(),
        Cf: sloModel.capacity(ctx, replicas),
        dR: 0,
        floor: Math.max(1, spec.minScale),
        notReady,
        add: [], remove: [], quotas: new Map(), notes: [],
        nextDown: state.lastScaleDownMs,
      };
      horizontal.toFloor(d);
      if (R > p.alpha * d.Cf) {
        // vertical first, then horizontal
        d.dR = R - p.alpha * d.Cf;
        vertical.up(d);
        horizontal.out(d);
      } else hysteresis.down(d);
      const samples = hysteresis.gate(d);

      const { add, remove, quotas, notes } = d;
      const quotaList: QuotaChange[] = [...quotas].filter(([id]) => !remove.includes(id)).map(([replicaId, quota]) => ({ replicaId, quota }));
      const kept = replicas.filter((x) => !remove.includes(x.id));
      const head = `hybrid: R=${fmt(R)} req/s (${forecast.label}, observed ${fmt(rps)}${lead > 0 ? `, +${fmt(lead)} cold-start lead` : ''}), ` +
        `C=${fmt(d.Cf)} req/s, budget ${fmt(ctx.budget)} ms`;
      const nextState: HybridState = { pred, lastScaleDownMs: d.nextDown, samples, ...forecastPatch, ...hysteresis.patch(d),
        ...(state.idleSinceMs !== undefined ? { idleSinceMs: state.idleSinceMs } : {}) };
      if (quotaList.length === 0 && add.length === 0 && remove.length === 0) {
        const dec = noChange(spec, obs, cap, notes.length ? `${head}; ${notes.join('; ')}` : `${head}; within [${p.beta}, ${p.alpha}]·C`);
        return { decision: dec, nextState, reason: dec.reason, ...(planned ? { forecast: planned } : {}) };
      }
      const decision: Decision = {
        replicas: kept.length + add.length,
        quotas: quotaList,
        add,
        remove,
        weights: weightsByCapability(cap, fn, kept),
        reason: `${head}; ${notes.join('; ')}`,
      };
      return { decision, nextState, reason: decision.reason, ...(planned ? { forecast: planned } : {}) };
    },
  };
}

export type { Observation };
