import { Actuator } from '../../../autoscaler/live/actuator';
import { decideLive, DecideInput } from '../../../autoscaler/live/decider';
import { PlacedReplica } from '../../../autoscaler/live/observation';
import { hybrid } from '../../../autoscaler/inference/hybrid';
import { SLO_GUARD } from '../../../autoscaler/inference/stages/slo-guard';
import { ProfileCapability } from '../../../autoscaler/rapp/profile-capability';
import { Decision, LATENCY_BUCKETS_MS } from '../../../autoscaler/inference/types';
import type { FunctionProvider } from '../../../gateway/providers/function-provider';
import type { ScalingEvent, ScalingEvents } from '../../../gateway/registry/scaling-events';
import { manualHoldMs } from '../../../gateway/registry/manual-scale';
import { aFunction, cap, observe, replica } from '../fixtures';

const ref = { name: 'f', namespace: 'openfaas-fn' };
const placed = (id: string, quota: number): PlacedReplica => ({ id, fn: 'f', ready: true, gpu: 'cpu0', smShare: 1, quota, batchSize: 1 });

/** A provider whose setQuota fails for replica `b` (as the agent's would for a vanished replica). */
function fakeProvider(calls: string[]): FunctionProvider {
  return {
    setQuota: async (_r: unknown, id: string, q: number) => {
      calls.push(`quota ${id} ${q}`);
      if (id === 'b') throw new Error('replica b of f.openfaas-fn not found');
    },
    scale: async (_r: unknown, n: number) => {
      calls.push(`scale ${n}`);
      throw new Error('redis down');
    },
    setWeight: async () => undefined,
  } as unknown as FunctionProvider;
}

describe('actuator: records what actually happened', () => {
  it('a failed setQuota or scale is a failed event with its error, and the known quota is unchanged', async () => {
    const recorded: ScalingEvent[] = [];
    const events = { record: async (_r: unknown, e: ScalingEvent) => void recorded.push(e) } as unknown as ScalingEvents;
    const calls: string[] = [];
    const a = new Actuator(fakeProvider(calls), events, 'hybrid');
    const reps = [placed('a', 0.5), placed('b', 0.5)];
    const d: Decision = { replicas: 3, quotas: [{ replicaId: 'a', quota: 0.8 }, { replicaId: 'b', quota: 0.8 }], add: [], remove: [], weights: {},
      reason: 'test' };
    const out = await a.apply(ref, 2, reps, d, 3, 1000);
    expect(calls).toEqual(['quota a 0.8', 'quota b 0.8', 'scale 3']);
    expect(out.map((o) => [o.action, o.replica, o.ok])).toEqual([
      ['quota', 'a', true],
      ['quota', 'b', false],
      ['replicas', undefined, false],
    ]);
    expect(recorded[0].error).toBeUndefined();
    expect(recorded[1].error).toMatch(/replica b of f.openfaas-fn not found/);
    expect(recorded[2].error).toMatch(/redis down/);
    expect(reps.map((r) => r.quota)).toEqual([0.8, 0.5]);
  });
});

describe('decider', () => {
  const base = (over: Partial<DecideInput> = {}): DecideInput => ({
    policy: hybrid({}, { capability: cap() }),
    spec: aFunction().build(),
    obs: observe(0, [replica('a', 'g0', 1, 1)]),
    now: 1000,
    capability: cap(),
    activeNow: false,
    hasProfile: true,
    desired: 1,
    sloGuardS: 5,
    sloGuardHoldS: 60,
    ...over,
  });

  it('holds, and says so, when the model answers C=0 for the running replicas (no profile for the function)', () => {
    const none = new ProfileCapability({});
    const out = decideLive(base({ capability: none, policy: hybrid({}, { capability: none }),
      obs: observe(50, [replica('a', 'g0', 1, 1), replica('b', 'g0', 1, 1)]) }));
    expect(out.decision).toBeUndefined();
    expect(out.skipped).toMatch(/hold: capability 0/);
  });

  it('holds while replicas the platform is starting are not listed yet (a wake from zero read C=0 and added one)', () => {
    const out = decideLive(base({ obs: observe(4, []), desired: 1, activeNow: true }));
    expect(out.decision).toBeUndefined();
    expect(out.skipped).toBe('hold: 1 replica(s) being started are not listed yet');
    // once listed (starting), the policy decides with its capacity
    const listed = decideLive(base({ obs: observe(4, [replica('n', 'g0', 1, 1, { ready: false })]), desired: 1, activeNow: true }));
    expect(listed.decision!.replicas).toBe(1);
  });

  it('a manual pin keeps the count (no add/remove) but lets quota changes through, and says until when', () => {
    const pin = { replicas: 3, at: 0, until: Date.UTC(2030, 0, 1) };
    // a heavy load: the policy alone would raise quotas and add replicas
    const reps = [replica('a', 'g0', 1, 0.2)];
    const free = decideLive(base({ obs: observe(200, reps), desired: 1 }));
    expect(free.decision!.replicas).toBeGreaterThan(1);
    const out = decideLive(base({ obs: observe(200, reps), desired: 3, pin }));
    expect(out.pinned).toBe(3);
    expect(out.decision!.add).toEqual([]);
    expect(out.decision!.remove).toEqual([]);
    expect(out.decision!.quotas.length).toBeGreaterThan(0);
    expect(out.decision!.reason).toMatch(/^manual scale to 3 held until 2030-01-01T00:00:00.000Z/);
  });

  /** Four quiet seconds with a 3 s zero-duration: the last decision and the state after it. */
  const idleToZero = (spec: DecideInput['spec']) => {
    let st = undefined as DecideInput['state'];
    let last!: ReturnType<typeof decideLive>;
    for (let t = 0; t <= 3000; t += 1000) {
      last = decideLive(base({ spec, state: st, now: t, zeroAfterMs: 3000 }));
      st = last.next;
    }
    return { last, st };
  };

  it('idle scale to zero for any policy; at zero it stays without work, and a waking request is not undone', () => {
    const spec = aFunction().minScale(0).build();
    const { last, st } = idleToZero(spec);
    expect(last.decision!.replicas).toBe(0);
    expect(last.decision!.reason).toMatch(/idle 3 s ≥ 3 s .*scale to zero/);
    const atZero = decideLive(base({ spec, state: st, now: 4000, zeroAfterMs: 3000, obs: observe(0, []), desired: 0 }));
    expect(atZero.skipped).toBe('at zero, idle');
    // the gateway woke it (desired 1, replica starting, the request in the current second)
    const woke = decideLive(base({ spec, state: atZero.next, now: 5000, zeroAfterMs: 3000, obs: observe(0, [replica('n', 'g0', 1, 1, { ready: false })]),
      desired: 1, activeNow: true }));
    expect(woke.decision!.replicas).toBeGreaterThanOrEqual(1);
    const next = decideLive(base({ spec, state: woke.next, now: 6000, zeroAfterMs: 3000, obs: observe(0, [replica('n', 'g0', 1, 1)]), desired: 1 }));
    expect(next.decision!.replicas).toBeGreaterThanOrEqual(1);
  });

  it('a woken function starts the policy afresh: its idle run from before zero does not send it straight back', () => {
    const spec = { ...aFunction().minScale(0).build(), idleToZeroMs: 3000 };
    const { last, st } = idleToZero(spec);
    expect(last.decision!.replicas).toBe(0);
    const atZero = decideLive(base({ spec, state: st, now: 4000, zeroAfterMs: 3000, obs: observe(0, []), desired: 0 }));
    // woken: the replica is not listed yet (hold), then listed with the last full second quiet
    const held = decideLive(base({ spec, state: atZero.next, now: 5000, zeroAfterMs: 3000, obs: observe(0, []), desired: 1, activeNow: true }));
    expect(held.skipped).toMatch(/being started are not listed yet/);
    const listed = decideLive(base({ spec, state: held.next, now: 6000, zeroAfterMs: 3000, obs: observe(0, [replica('n', 'g0', 1, 1, { ready: false })]),
      desired: 1 }));
    expect(listed.decision!.replicas).toBeGreaterThanOrEqual(1);
  });

  it('the SLO guard acts for policies that take it (ours), not for a baseline; what it gave is held, then released', () => {
    // a function sized right by the model that misses its SLO on every request (the model is off)
    const reps = [replica('a', 'g0', 1, 1)];
    const missing = observe(2, reps, { latencyBuckets: LATENCY_BUCKETS_MS.map((b) => (b === 200 ? 2 : 0)), latencyMs: { p50: 150, p95: 190, p99: 199 } });
    const run = (policy: DecideInput['policy']) => {
      let state: DecideInput['state'];
      const outs = [];
      for (let t = 1; t <= 5; t++) {
        const out = decideLive(base({ policy, obs: missing, now: t * 1000, state, spec: aFunction().slo(50).maxScale(3).build() }));
        state = out.next;
        outs.push(out);
      }
      return { outs, state: state! };
    };
    // a policy whose model says the replica it has is enough
    const holding = (guard?: boolean): DecideInput['policy'] => ({
      name: 'holding',
      ...(guard ? { guard: SLO_GUARD } : {}),
      initialState: () => ({}),
      decide: (_s, st, o) => ({ decision: { replicas: o.replicas.length, quotas: [], add: [], remove: [], weights: {}, reason: 'enough' }, nextState: st,
        reason: 'enough' }),
    });
    const ours = run(holding(true));
    expect(ours.outs[4].decision!.add).toHaveLength(1);
    expect(ours.outs[4].decision!.reason).toMatch(/^SLO guard: 10 of 10 requests over 50 ms in 5 s/);
    expect(ours.state.guard.holdUntilMs).toBe(65000);
    expect(run(holding()).outs.every((o) => !o.decision || !/SLO guard/.test(o.decision.reason))).toBe(true);
    // within the hold a scale-down (an idle second: the policy wants fewer) is held and says so; after it, it goes through
    const two = [replica('a', 'g0', 1, 1), replica('b', 'g0', 1, 1)];
    const removing = { ...hybrid({}, { capability: cap() }), decide: (_s: unknown, st: unknown) => ({ decision: { replicas: 1, quotas: [], add: [],
      remove: ['b'], weights: {}, reason: 'fewer' }, nextState: st, reason: 'fewer' }) };
    const held = decideLive(base({ policy: removing, obs: observe(1, two), desired: 2, now: 30000, state: ours.state }));
    expect(held.decision).toBeUndefined();
    expect(held.skipped).toMatch(/^hold: the SLO guard's capacity is kept until 1970-01-01T00:01:05.000Z \(fewer\)/);
    const after = decideLive(base({ policy: removing, obs: observe(1, two), desired: 2, now: 65000, state: ours.state }));
    expect(after.decision!.remove).toEqual(['b']);
  });

  it('manual hold window: annotation (Go duration or seconds) > env > 5 min', () => {
    expect(manualHoldMs({}, {}, {})).toBe(300_000);
    expect(manualHoldMs({}, {}, { MLFAAS_MANUAL_SCALE_HOLD_S: '20' })).toBe(20_000);
    expect(manualHoldMs({}, { 'mlfaas.autoscaler.manual-hold': '1m' }, { MLFAAS_MANUAL_SCALE_HOLD_S: '20' })).toBe(60_000);
    expect(manualHoldMs({ 'mlfaas.autoscaler.manual-hold': '0' }, {}, {})).toBe(0);
  });
});
