/**
 * Policy 'mlfaas-packed' (issue 24): the hybrid with `placement: 'packed'` (best fit by smShare ×
 * quota with forecast headroom, placement-packed.ts) and its replicas handed to the stages in
 * consolidation order (emptiest device first), so scale-in empties devices. With `migrateBelow` > 0,
 * a quiet tick (the hybrid changes nothing, every replica ready) may also empty a device the
 * function holds alone at occupancy ≤ migrateBelow by moving its replicas (placement-migrate.ts):
 * copies start cold, the originals are removed only once every replica is ready. Its own module so
 * the stages can import placement-packed.ts without a cycle through hybrid.ts.
 */
import { parseParams, weightsByCapability } from './decision-helpers';
import { hybrid, type HybridState } from './hybrid';
import { packOnUsed, planMove } from './placement-migrate';
import { consolidationOrder } from './placement-packed';
import type { InferencePolicy, PolicyDeps, PolicyGuard, PolicyParams, ScalingSpec } from './types';

/**
 * Our parameters beside the hybrid's. migrateBelow: move the function's replicas off its emptiest
 * device when that device's occupancy is at most this (0: never). planPercentile: the latency
 * percentile the stages plan the SLO for (0: the spec's own); below the spec's it trades devices for
 * violations (the simulator and the SLO guard still judge by the spec's).
 */
export const PACKED_DEFAULTS = { migrateBelow: 0.3, planPercentile: 0 };

export interface PackedState {
  inner: HybridState;
  /** Replicas whose copies are starting; removed once every replica of the function is ready. */
  draining: string[];
}

/** 'mlfaas-packed': the hybrid packed, in consolidation order, with migration off a lightly held device. */
export function mlfaasPacked(params: PolicyParams, deps: PolicyDeps): InferencePolicy<PackedState> {
  const own: PolicyParams = {};
  const rest: PolicyParams = {};
  for (const [k, v] of Object.entries(params)) (k in PACKED_DEFAULTS ? own : rest)[k] = v;
  const p = parseParams('mlfaas-packed', PACKED_DEFAULTS, own);
  const inner = hybrid({ placement: 'packed', ...rest }, deps);
  const hp = { maxSmTypes: Number(rest.maxSmTypes ?? 48), limit: Number(rest.hgoThreshold ?? 0.95) };
  const plan = (spec: ScalingSpec): ScalingSpec =>
    (p.planPercentile > 0 ? { ...spec, sloPercentile: Math.min(spec.sloPercentile, p.planPercentile) } : spec);
  const g = inner.guard;
  // the guard judges by the percentile planned for, and its replica is packed like the others when a used device takes it
  const guard: PolicyGuard | undefined = g && { name: g.name, init: () => g.init(), check: (st, input) => {
    const out = g.check(st, { ...input, spec: plan(input.spec) });
    return out.decision ? { ...out, decision: { ...out.decision, add: out.decision.add.map((a) => packOnUsed(input.obs, a, hp.maxSmTypes, hp.limit)) } } : out;
  } };
  return {
    name: 'mlfaas-packed',
    guard,
    initialState: (spec) => ({ inner: inner.initialState(spec), draining: [] }),
    decide(spec, state, obs, now) {
      const out = inner.decide(plan(spec), state.inner, consolidationOrder(obs), now);
      const d = out.decision;
      const present = new Set(obs.replicas.map((r) => r.id));
      const draining = state.draining.filter((id) => present.has(id) && !d.remove.includes(id));
      const allReady = obs.replicas.every((r) => r.ready);
      const quiet = d.add.length === 0 && d.remove.length === 0 && d.quotas.length === 0;
      if (draining.length > 0) {
        if (!allReady || d.add.length > 0) return { ...out, nextState: { inner: out.nextState, draining } };
        // the copies are ready: the originals go (their quotas are no longer the hybrid's to change)
        const remove = [...d.remove, ...draining];
        const kept = obs.replicas.filter((r) => !remove.includes(r.id));
        const decision = { ...d, remove, quotas: d.quotas.filter((q) => !remove.includes(q.replicaId)), replicas: kept.length,
          weights: weightsByCapability(deps.capability, spec.name, kept), reason: `${d.reason}; drained ${draining.join(', ')} (moved)` };
        return { decision, nextState: { inner: out.nextState, draining: [] }, reason: decision.reason };
      }
      if (p.migrateBelow > 0 && quiet && allReady) {
        const plan = planMove(obs, spec.name, p.migrateBelow, hp.maxSmTypes, hp.limit);
        if (plan) {
          const reason = `${d.reason}; consolidate: move ${plan.drain.length} replica(s) off ${plan.from}`;
          const decision = { ...d, add: plan.add, replicas: obs.replicas.length + plan.add.length, reason };
          return { decision, nextState: { inner: out.nextState, draining: plan.drain }, reason };
        }
      }
      return { ...out, nextState: { inner: out.nextState, draining } };
    },
  };
}
