import { hybrid, HybridState, trendSlope } from '../../autoscaler/inference/hybrid';
import { ProfileCapability } from '../../autoscaler/rapp/profile-capability';
import { simulate, SimFunction } from '../../autoscaler/sim/engine';
import { aFunction, cap, clusterOf, observe, replica, synthProfile } from './fixtures';
import { ReplicaState } from '../../autoscaler/inference/types';

// Algorithm 1 tests pin the per-replica M/D/1 model (sloModel 'mdc'); 'shared' (the default) has its own block below.
const policy = (params = {}) => hybrid({ sloModel: 'mdc', ...params }, { capability: cap() });
const fresh = (p = policy()) => p.initialState(aFunction().build());

describe("HAS-GPU hybrid (Algorithm 1, sloModel 'mdc')", () => {
  test('scales up vertically first: quota rises, no new replica', () => {
    const r = [replica('r1', 'g1', 0.5, 0.2)];
    const { decision } = policy().decide(aFunction().build(), fresh(), observe(30, r), 1000);
    expect(decision.add).toEqual([]);
    expect(decision.quotas).toHaveLength(1);
    expect(decision.quotas[0].quota).toBeGreaterThan(0.2);
    expect(decision.quotas[0].quota).toBeLessThanOrEqual(1);
    expect(decision.reason).toMatch(/quota r1 0.2→/);
  });

  test('replicas with the most SMs are raised first', () => {
    const r = [replica('small', 'g2', 0.3, 0.2), replica('big', 'g1', 0.8, 0.2)];
    const { decision } = policy().decide(aFunction().build(), fresh(), observe(20, r), 1000);
    expect(decision.quotas[0].replicaId).toBe('big');
  });

  test('then horizontally, on the used GPU with the lowest occupancy (SM-aligned) before a new one', () => {
    const r = [replica('r1', 'g1', 0.5, 0.2)];
    const { decision } = policy().decide(aFunction().maxScale(3).build(), fresh(), observe(60, r), 1000);
    expect(decision.quotas).toEqual([{ replicaId: 'r1', quota: 1 }]);
    expect(decision.add).toHaveLength(1);
    expect(decision.add[0].gpu).toBe('g1');
    expect(decision.add[0].smShare).toBeLessThanOrEqual(0.5 + 1e-9);
  });

  test('a gap larger than the used GPU can cover goes to a new GPU (lines 18-25), within max_scale', () => {
    const r = [replica('r1', 'g1', 0.5, 0.2)];
    const { decision } = policy().decide(aFunction().maxScale(3).build(), fresh(), observe(400, r), 1000);
    expect(decision.add[0].gpu).toBe('new:0');
    expect(decision.replicas).toBe(3);
  });

  test('a new GPU only when no used GPU has room; none when the cluster is full', () => {
    const r = [replica('r1', 'g1', 1, 0.9)];
    const full = { id: 'g1', slots: [{ smShare: 1, members: [{ replicaId: 'r1', fn: 'f', quota: 0.9 }, { replicaId: 'x', fn: 'other', quota: 0.1 }] }] };
    const up = policy().decide(aFunction().build(), fresh(), observe(200, r, { cluster: { gpus: [full], canAddGpu: true } }), 1000).decision;
    expect(up.add.length).toBeGreaterThan(0);
    expect(up.add[0].gpu).toBe('new:0');
    const none = policy().decide(aFunction().build(), fresh(), observe(200, r, { cluster: { gpus: [full], canAddGpu: false } }), 1000).decision;
    expect(none.add).toEqual([]);
    expect(none.reason).toMatch(/no capacity/);
  });

  test('scales down after the cool-down, fewest SMs first, never below min_scale', () => {
    const r = [replica('big', 'g1', 0.8, 1), replica('small', 'g2', 0.3, 1)];
    const p = policy();
    const s0: HybridState = { ...fresh(p), pred: p.initialState(aFunction().build()).pred };
    const out = p.decide(aFunction().build(), s0, observe(0, r), 60_000);
    expect(out.decision.remove.concat(out.decision.quotas.map((q) => q.replicaId))[0]).toBe('small');
    expect(out.decision.replicas).toBeGreaterThanOrEqual(1);
    expect(out.nextState.lastScaleDownMs).toBe(60_000);
    const again = p.decide(aFunction().build(), out.nextState, observe(0, r), 65_000);
    expect(again.decision.quotas).toEqual([]);
    expect(again.decision.remove).toEqual([]);
  });

  test.each([
    { name: 'no replicas: deploys min_scale', min: 2, reps: 0, want: 2 },
    { name: 'one replica, min_scale 1, idle: keeps it', min: 1, reps: 1, want: 1 },
  ])('$name', ({ min, reps, want }) => {
    const r = reps ? [replica('r1', 'g1', 0.5, 0.1)] : [];
    const { decision } = policy().decide(aFunction().minScale(min).build(), fresh(), observe(0, r), 1000);
    expect(decision.replicas).toBe(want);
  });

  test('Dilu lazy window holds a one-second burst to vertical scaling only', () => {
    const r = [replica('r1', 'g1', 0.5, 0.2)];
    const lazy = policy({ lazy: true });
    const { decision } = lazy.decide(aFunction().build(), lazy.initialState(aFunction().build()), observe(400, r), 1000);
    expect(decision.add).toEqual([]);
    expect(decision.quotas.length).toBe(1);
    expect(decision.reason).toMatch(/lazy: scale-out waits/);
  });

  test('is pure: same inputs, same outputs, observation untouched', () => {
    const r = [replica('r1', 'g1', 0.5, 0.2)];
    const obs = observe(400, r);
    const snap = JSON.stringify(obs);
    const a = policy().decide(aFunction().build(), fresh(), obs, 1000);
    const b = policy().decide(aFunction().build(), fresh(), obs, 1000);
    expect(JSON.stringify(obs)).toBe(snap);
    expect(a).toEqual(b);
  });

  test('weights follow capability and sum to 1', () => {
    const r = [replica('a', 'g1', 0.5, 1), replica('b', 'g2', 0.5, 0.5)];
    const { decision } = policy().decide(aFunction().build(), fresh(), observe(20, r, { cluster: clusterOf(r) }), 1000);
    const w = decision.weights;
    expect(w.a + w.b).toBeCloseTo(1, 9);
    expect(w.a).toBeGreaterThan(w.b);
  });

  test.each([
    { params: { alpha: 0.2, beta: 0.5 }, msg: /beta < alpha/ },
    { params: { quotaStep: 'x' }, msg: /quotaStep must be a number/ },
    { params: { nope: 1 }, msg: /unknown parameter "nope"/ },
  ])('rejects bad parameters: $msg', ({ params, msg }) => expect(() => policy(params)).toThrow(msg));
});

describe('hybrid caches (per capability profile) agree with computing afresh', () => {
  const pts = synthProfile();
  const shared = () => new ProfileCapability({ a: pts, b: pts, c: pts.map((x) => ({ ...x, latencyMs: x.latencyMs * 1.7 })) });
  const fns = (): SimFunction[] =>
    ['a', 'b', 'c'].map((name, i) => ({
      spec: { ...aFunction().slo(80 + 40 * i).maxScale(12).build(), name },
      model: name,
      counts: Array.from({ length: 120 }, (_, t) => Math.round(20 + 15 * i + 60 * Math.max(0, Math.sin(t / (9 + i))))),
      intervalS: 1,
    }));

  test('a simulated run is identical with cache on and off (decisions, violations, cost)', () => {
    const run = (cache: boolean) => simulate(fns(), { policy: 'hybrid', params: { cache }, capability: shared(), seed: 3, record: true });
    const on = run(true);
    const off = run(false);
    const strip = (r: typeof on) => ({ ...r, decideMsPerTick: 0 });
    expect(strip(on)).toEqual(strip(off));
    expect(on.coldStarts).toBeGreaterThan(0);
  });

  test('a tick-like round over many functions, each with its own profile, is identical with cache on and off (lazy candidate lists, dense memos)', () => {
    // per-function profiles (noisy copies of the synthetic one: exact capability ties across SM shares
    // exercise the on-equal-cost ordering), GPUs whose slots leave quota and SM room on and off the
    // 0.1 SM grid (lazy and eager used-GPU lists, duplicate SM options), random load over rounds
    let seed = 11;
    const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
    const n = 48;
    const profiles: Record<string, ReturnType<typeof synthProfile>> = {};
    const base = synthProfile();
    for (let i = 0; i < n; i++) {
      const k = 0.5 + 2 * rnd();
      profiles[`f${i}`] = i % 4 === 3 ? profiles[`f${i - 1}`] : base.map((x) => ({ ...x,
        latencyMs: x.latencyMs * (i % 2 ? k : Math.round(k * 4) / 4) * (i % 3 ? 1 + 0.05 * rnd() : 1) }));
    }
    const slotShares = [0.3, 0.5, 0.25, 0.2];
    const reps = (i: number): ReplicaState[] => [replica(`f${i}-a`, `g${i}`, slotShares[i % 4], 0.3, { batchSize: 4 }),
      replica(`f${i}-b`, `g${i}`, slotShares[i % 4], 0.2, { batchSize: 2 })];
    // each GPU's SMs are full (a filler slot beside the function's): only the slots' quota room is
    // offered, on the SM grid (lazy used-GPU lists) and off it (0.45, 0.25: eager ones)
    const fillShares = [0.7, 0.45, 0.75, 0.8];
    const fillers = Array.from({ length: n }, (_, i) => ({ id: `g${i}`, slots: [{ smShare: fillShares[i % 4],
      members: [{ replicaId: `x${i}`, fn: 'x', quota: 0.1 * (1 + (i % 7)) }] }] }));
    const cluster = clusterOf(Array.from({ length: n }, (_, i) => reps(i)).flat(), fillers);
    // every other function sees a cluster that cannot grow: its replicas go onto used GPUs
    const full = { ...cluster, canAddGpu: false };
    const specs = Array.from({ length: n }, (_, i) => ({ ...aFunction().slo(60 + 20 * (i % 5)).maxScale(6 + (i % 30)).build(), name: `f${i}` }));
    const run = (cache: boolean) => {
      seed = 5;
      const c = new ProfileCapability(profiles);
      const pol = hybrid({ cache }, { capability: c });
      const states = specs.map((s) => pol.initialState(s));
      const out: unknown[] = [];
      for (let r = 0; r < 8; r++)
        for (let i = 0; i < n; i++) {
          const obs = observe(Math.floor(c.capability(`f${i}`, 4, slotShares[i % 4], 0.3) * 2 * (0.1 + 2 * rnd())), reps(i),
            { cluster: i % 2 ? full : cluster });
          const d = pol.decide(specs[i], states[i], obs, 1000 * (r + 1));
          states[i] = d.nextState;
          out.push(d.decision, d.nextState);
        }
      return out;
    };
    const on = run(true);
    expect(on).toEqual(run(false));
    const adds = on.filter((d) => (d as { add?: unknown[] }).add?.length);
    expect(adds.length).toBeGreaterThan(20);
  });

  test('functions sharing a profile share its token; a re-profile changes it and the decision follows', () => {
    const c = shared();
    expect(c.profileKey('a')).toBe(c.profileKey('b'));
    expect(c.profileKey('a')).not.toBe(c.profileKey('c'));
    const spec = { ...aFunction().build(), name: 'a' };
    const r = [replica('r1', 'g1', 0.5, 0.4)];
    const obs = observe(30, r);
    const cached = hybrid({}, { capability: c });
    const before = cached.decide(spec, cached.initialState(spec), obs, 1000).decision;
    const oldKey = c.profileKey('a');
    c.set('a', pts.map((x) => ({ ...x, latencyMs: x.latencyMs * 3 })));
    expect(c.profileKey('a')).not.toBe(oldKey);
    const after = cached.decide(spec, cached.initialState(spec), obs, 1000).decision;
    const fresh = hybrid({ cache: false }, { capability: c });
    expect(after).toEqual(fresh.decide(spec, fresh.initialState(spec), obs, 1000).decision);
    expect(after).not.toEqual(before);
  });

  test('profile latency memo agrees with the uncached interpolation, on and off the grid', () => {
    const c = shared();
    for (let i = 0; i < 500; i++) {
      const b = [1, 2, 3, 4, 6][i % 5];
      const s = i % 3 === 0 ? Math.round(((i * 37) % 100) + 1) / 100 : ((i * 0.6180339) % 1) + 0.01;
      const q = ((i * 13) % 10) / 10 + 0.05 * (i % 2);
      for (const fn of ['a', 'c']) {
        expect(c.latencyMs(fn, b, s, q)).toBe(c.latencyMsUncached(fn, b, s, q));
        expect(c.latencyMs(fn, b, s, q)).toBe(c.latencyMsUncached(fn, b, s, q));
      }
    }
  });
});

describe("hybrid sloModel 'shared' (the function's replicas as one queue)", () => {
  test('scales up vertically first, then adds replicas, and the fleet meets the SLO at R/α', () => {
    const pol = policy({ sloModel: 'shared' });
    const r = [replica('r1', 'g1', 0.5, 0.2)];
    const small = pol.decide(aFunction().build(), fresh(pol), observe(30, r), 1000).decision;
    expect(small.quotas.length + small.add.length).toBeGreaterThan(0);
    const big = pol.decide(aFunction().maxScale(8).build(), fresh(pol), observe(400, r), 1000).decision;
    expect(big.add.length).toBeGreaterThan(0);
    expect(big.reason).toMatch(/\+replica/);
  });

  test('holds to the function’s own percentile: mdcPercentile does not change its decisions', () => {
    const r = [replica('r1', 'g1', 0.5, 0.2)];
    const a = policy({ sloModel: 'shared' });
    const b = policy({ sloModel: 'shared', mdcPercentile: 80 });
    expect(b.decide(aFunction().build(), fresh(b), observe(60, r), 1000).decision).toEqual(a.decide(aFunction().build(), fresh(a), observe(60, r),
      1000).decision);
  });

  test('scales down to fewer replicas under light load after the cool-down', () => {
    const pol = policy({ sloModel: 'shared' });
    const r = [replica('r1', 'g1', 0.5, 0.5), replica('r2', 'g2', 0.5, 0.5), replica('r3', 'g3', 0.5, 0.5)];
    const { decision } = pol.decide(aFunction().build(), fresh(pol), observe(1, r), 100000);
    expect(decision.remove.length + decision.quotas.length).toBeGreaterThan(0);
    expect(decision.replicas).toBeGreaterThanOrEqual(1);
  });
});

describe("hybrid sloModel 'shared': cold-start lead, hysteresis, cool-down", () => {
  test.each([
    { ys: [], slope: 0 },
    { ys: [5], slope: 0 },
    { ys: [1, 2, 3], slope: 1 },
    { ys: [3, 3, 3, 3], slope: 0 },
    { ys: [0, 2, 4, 6, 8], slope: 2 },
    { ys: [4, 0], slope: -4 },
    { ys: [1, 3, 2, 4], slope: 0.8 },
  ])('trendSlope($ys) = $slope (least squares)', ({ ys, slope }) => expect(trendSlope(ys)).toBeCloseTo(slope, 12));

  test.each([
    { leadS: 0, coldStartS: 20, lead: false },
    { leadS: 20, coldStartS: undefined, lead: true },
    { leadS: -1, coldStartS: 20, lead: true },
    { leadS: -1, coldStartS: undefined, lead: false },
  ])('leadS $leadS (deps.coldStartS $coldStartS): lead on a rising trend = $lead', ({ leadS, coldStartS, lead }) => {
    const pol = hybrid({ sloModel: 'shared', leadS }, { capability: cap(), coldStartS });
    const spec = aFunction().maxScale(16).build();
    const r = [replica('r1', 'g1', 0.5, 0.5)];
    let st = pol.initialState(spec);
    let reason = '';
    for (let t = 1; t <= 10; t++) ({ nextState: st, reason } = pol.decide(spec, st, observe(5 * t, r), 1000 * t));
    expect(/cold-start lead/.test(reason)).toBe(lead);
  });

  // Light load on a fleet sized for more: the scale-down must not leave a fleet the next tick re-grows.
  // A regression guard, not proof of the hysteresis: this fixture passes with downUtil = α too (the
  // evidence for it is the Faro simulation, 390 → 17 cold starts); at 120 req/s both re-grow.
  test.each([5, 10, 15, 20, 30, 40])('after a scale-down at %d req/s the same load does not re-grow the fleet', (rps) => {
    const pol = hybrid({ sloModel: 'shared' }, { capability: cap() });
    const spec = aFunction().maxScale(16).build();
    const r = [replica('r1', 'g1', 0.5, 0.6), replica('r2', 'g2', 0.5, 0.6), replica('r3', 'g3', 0.3, 0.4)];
    let st = pol.initialState(spec);
    for (let t = 1; t <= 5; t++) st = pol.decide(spec, st, observe(rps, r), 1000 * t).nextState;
    const down = pol.decide(spec, st, observe(rps, r), 100_000);
    const kept = r.filter((x) => !down.decision.remove.includes(x.id)).map((x) => ({ ...x,
      quota: down.decision.quotas.find((q) => q.replicaId === x.id)?.quota ?? x.quota }));
    const next = pol.decide(spec, down.nextState, observe(rps, kept), 101_000).decision;
    expect(next.add).toEqual([]);
    expect(next.quotas.filter((q) => q.quota > (kept.find((x) => x.id === q.replicaId)?.quota ?? 0))).toEqual([]);
  });

  test.each([
    { sinceUpS: 2, removes: false },
    { sinceUpS: 9, removes: false },
    { sinceUpS: 10, removes: true },
    { sinceUpS: 60, removes: true },
  ])('removals wait the 10 s cool-down after a scale-up ($sinceUpS s ago: removes $removes)', ({ sinceUpS, removes }) => {
    const pol = hybrid({ sloModel: 'shared' }, { capability: cap() });
    const spec = aFunction().build();
    const r = [replica('r1', 'g1', 0.5, 0.5), replica('r2', 'g2', 0.5, 0.5), replica('r3', 'g3', 0.5, 0.5)];
    const now = 100_000;
    const st = { ...pol.initialState(spec), lastScaleUpMs: now - sinceUpS * 1000 };
    const { decision } = pol.decide(spec, st, observe(1, r), now);
    expect(decision.remove.length + decision.quotas.length > 0).toBe(removes);
  });

  test.each([
    { downUtil: 0.3, ok: false },
    { downUtil: 0.6, ok: true },
    { downUtil: 0.9, ok: true },
    { downUtil: 0.95, ok: false },
  ])('downUtil $downUtil must lie in (β, α]: accepted $ok', ({ downUtil, ok }) => {
    const make = () => hybrid({ sloModel: 'shared', downUtil }, { capability: cap() });
    if (ok) expect(make).not.toThrow();
    else expect(make).toThrow(/downUtil/);
  });
});

describe("hybrid sloModel 'shared': bridge release when a cold-started replica is ready", () => {
  // A burst of X req/s: quota up and replica(s) added; the burst halves while they cold-start.
  const run = (X: number, bridgeTrim: boolean) => {
    const pol = hybrid({ sloModel: 'shared', bridgeTrim }, { capability: cap() });
    const spec = aFunction().maxScale(8).build();
    const up = pol.decide(spec, pol.initialState(spec), observe(X, [replica('r1', 'g1', 0.5, 0.5)]), 1000);
    const q1 = up.decision.quotas.find((q) => q.replicaId === 'r1')?.quota ?? 0.5;
    const cold = [replica('r1', 'g1', 0.5, q1), ...up.decision.add.map((a, i) => replica(`n${i}`, `gx${i}`, a.smShare, a.quota,
      { batchSize: a.batchSize, ready: false }))];
    let st = up.nextState;
    for (let t = 2; t <= 20; t++) st = pol.decide(spec, st, observe(X / 2, cold), 1000 * t).nextState;
    const ready = cold.map((r) => ({ ...r, ready: true }));
    const d = pol.decide(spec, st, observe(X / 2, ready), 21_000);
    return { up: up.decision, ready, d, pol, spec };
  };
  const share = (rs: ReplicaState[]) => rs.reduce((a, r) => a + r.smShare * r.quota, 0);

  test.each([60, 150, 300])('at %d req/s then half: quotas step down once ready, nothing added or removed, and the same load does not re-grow it', (X) => {
    const { up, ready, d, pol, spec } = run(X, true);
    expect(up.add.length).toBeGreaterThan(0);
    expect(d.decision.add).toEqual([]);
    expect(d.decision.remove).toEqual([]);
    expect(d.decision.quotas.length).toBeGreaterThan(0);
    for (const q of d.decision.quotas) expect(q.quota).toBeLessThan(ready.find((r) => r.id === q.replicaId)!.quota);
    const after = ready.map((r) => ({ ...r, quota: d.decision.quotas.find((q) => q.replicaId === r.id)?.quota ?? r.quota }));
    expect(share(after)).toBeLessThan(share(ready));
    expect(d.reason).toMatch(/became ready/);
    const next = pol.decide(spec, d.nextState, observe(X / 2, after), 22_000).decision;
    expect(next.add).toEqual([]);
    expect(next.quotas.filter((q) => q.quota > after.find((r) => r.id === q.replicaId)!.quota)).toEqual([]);
  });

  test.each([60, 150, 300])('at %d req/s with bridgeTrim off the fleet is held (no change in the band)', (X) => {
    const { d } = run(X, false);
    expect(d.decision.quotas).toEqual([]);
    expect(d.decision.add).toEqual([]);
    expect(d.decision.remove).toEqual([]);
  });
});

test.each(['mdc', 'budget', 'none', 'shared'])('sloModel %s: a function with no profile and no replicas gets a decision ' +
  '(no replica to size, none placed)', (sloModel) => {
  const pol = hybrid({ sloModel }, { capability: new ProfileCapability({}) });
  const spec = aFunction().build();
  const { decision } = pol.decide(spec, pol.initialState(spec), observe(10, []), 1000);
  expect(decision.add).toEqual([]);
  expect(decision.replicas).toBe(0);
});
