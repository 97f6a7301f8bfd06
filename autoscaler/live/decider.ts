/**
 * The decider: the registered pure policy plus the live platform's rules around it, composed in a
 * fixed order, all pure (inputs in, decision out; the collector reads, the actuator writes):
 * 1. idle scale to zero (OpenFaaS semantics, any policy, no model needed; idle.ts), and a function
 *    at zero stays there until a request wakes it;
 * 2. capability gate: never act without a profile, on a capability of 0 for the replicas running, or
 *    while replicas the platform is starting are not listed yet;
 * 3. the policy's decision;
 * 4. the policy's guard stage, where it has one (ours: the SLO guard, inference/stages/slo-guard.ts;
 *    baselines run as published), with this loop's window and hold: what the guard gave is not
 *    taken back for `sloGuardHoldS`;
 * 5. a manual-scale pin keeps the replica count (quota changes still apply).
 */
import { idleLongEnough, idleSince } from '../inference/idle';
import type { Capability, Decision, DecisionForecast, ScalingSpec, InferencePolicy, Observation } from '../inference/types';
import type { ManualPin } from '../../gateway/registry/manual-scale';
import { freshGuard, SloGuardState } from '../inference/stages/slo-guard';

/** Per-function state of the live rules (besides the policy's own). */
export interface LiveState {
  policy: unknown;
  idleSinceMs: number | null;
  guard: SloGuardState;
}

export interface DecideInput {
  policy: InferencePolicy<unknown>;
  spec: ScalingSpec;
  /** undefined: a fresh function (policy.initialState). */
  state?: LiveState;
  obs: Observation;
  now: number;
  capability: Capability;
  /** Idle window for scale to zero, ms; undefined: the function may not go to zero. */
  zeroAfterMs?: number;
  /** Work seen in the current, still open second (a request that just woke the function). */
  activeNow: boolean;
  pin?: ManualPin;
  /** Whether a capability profile is loaded for the function. */
  hasProfile: boolean;
  /** Desired replicas as stored now (the gateway's wake sets 1 before any replica exists). */
  desired: number;
  /** Consecutive seconds over the SLO before the guard acts. */
  sloGuardS: number;
  /** How long capacity the guard gave is kept (decisions that reduce capacity are held), s. */
  sloGuardHoldS: number;
}

export interface DecideOutput {
  /** undefined: hold (see `skipped`). */
  decision?: Decision;
  skipped?: string;
  /** Replica count to write instead of the policy's (a manual pin). */
  pinned?: number;
  next: LiveState;
  /** The policy's load forecast when it ran and gave one (kept whatever the guard or a pin did to its decision; for display). */
  forecast?: DecisionForecast;
}

/** Σ capability of the replicas as the model answers now (req/s). */
export function replicaCapability(cap: Capability, fn: string, obs: Observation): number {
  let c = 0;
  for (const r of obs.replicas) c += cap.capability(fn, r.batchSize, r.smShare, r.quota);
  return c;
}

export function decideLive(i: DecideInput): DecideOutput {
  const { spec, obs, now } = i;
  const st: LiveState = i.state ?? { policy: i.policy.initialState(spec), idleSinceMs: null, guard: freshGuard() };
  // At zero (desired 0, nothing running, no work) a function that may idle stays there whatever the
  // policy's floor: only a request wakes it (the gateway's wake), not the autoscaler.
  const quiet = !i.activeNow && obs.arrivals === 0 && obs.queueLength === 0 && obs.inFlight === 0;
  if (i.zeroAfterMs !== undefined && i.desired === 0 && obs.replicas.length === 0 && quiet && !i.pin) {
    // the policy starts afresh on the wake: its own idle run (hybrid's) and forecast date from
    // before the function went to zero, and a stale idle run sent a woken function straight back
    return { skipped: 'at zero, idle', next: { ...st, policy: i.policy.initialState(spec), idleSinceMs: null } };
  }
  // Idle scale to zero needs no capability model (OpenFaaS's idler has none): it comes first.
  const idle = i.activeNow ? null : idleSince(st.idleSinceMs, { arrivals: obs.arrivals, queueLength: obs.queueLength, inFlight: obs.inFlight,
    replicas: obs.replicas.length }, now);
  if (i.zeroAfterMs !== undefined && idleLongEnough(idle, i.zeroAfterMs, now) && !i.pin) {
    const reason = `idle ${Math.round((now - idle!) / 1000)} s ≥ ${i.zeroAfterMs / 1000} s (com.openfaas.scale.zero-duration) with min_scale 0: scale to zero`;
    return { decision: { replicas: 0, quotas: [], add: [], remove: obs.replicas.map((r) => r.id), weights: {}, reason },
      next: { ...st, policy: i.policy.initialState(spec), idleSinceMs: null } };
  }
  // After a redeploy the loaded profile stays the previous version's until the agent has measured
  // the new one (live-autoscaler.ts keeps it): the best estimate there is, corrected online, and
  // with profiling off the only one. But no profile, or a model that answers 0 for the replicas
  // running (C=0.0), is no estimate: every rule would read "no capacity" and add replicas (issue
  // 10's runaway), so the function holds and the report says so.
  if (!i.hasProfile) return { skipped: 'hold: no capability profile yet', next: { ...st, idleSinceMs: idle } };
  // Replicas the platform is starting (a wake from zero, a scale-up) but has not listed yet are
  // capacity the policy cannot see: deciding without them read C=0 at every wake and added a
  // replica beside the one starting (seen live: image-classify 1 → 2 at 4 req/s, "C=0.0").
  // They are listed (as starting) within a moment, so this hold is short.
  if (obs.replicas.length < i.desired && !i.pin) {
    return { skipped: `hold: ${i.desired - obs.replicas.length} replica(s) being started are not listed yet`, next: { ...st, idleSinceMs: idle } };
  }
  if (obs.replicas.length > 0 && !(replicaCapability(i.capability, spec.name, obs) > 0)) {
    return { skipped: 'hold: capability 0 for the current replicas (profile missing or re-profiling)', next: { ...st, idleSinceMs: idle } };
  }
  const { decision: polled, nextState, forecast } = i.policy.decide(spec, st.policy, obs, now);
  const fc = forecast ? { forecast } : {};
  let decision = polled;
  const guard = i.policy.guard;
  const g = guard
    ? guard.check(st.guard, { spec, obs, decision, now, windowS: i.sloGuardS, holdS: i.sloGuardHoldS,
        capacityRps: replicaCapability(i.capability, spec.name, obs) })
    : { next: st.guard };
  if (g.decision) decision = g.decision;
  else if (!i.pin && g.heldUntilMs !== undefined) {
    const skipped = `hold: the SLO guard's capacity is kept until ${new Date(g.heldUntilMs).toISOString()} (${decision.reason})`;
    return { skipped, next: { policy: nextState, idleSinceMs: idle, guard: g.next }, ...fc };
  }
  const next: LiveState = { policy: nextState, idleSinceMs: decision.replicas === 0 ? null : idle, guard: g.next };
  if (!i.pin) return { decision, next, ...fc };
  const held = { ...decision, replicas: i.pin.replicas, add: [], remove: [],
    reason: `manual scale to ${i.pin.replicas} held until ${new Date(i.pin.until).toISOString()}: count kept; ${decision.reason}` };
  return { decision: held, pinned: i.pin.replicas, next, ...fc };
}
