import { createPolicy, policy, policyNames } from '../../autoscaler/inference/registry';
import { InferencePolicy, Observation } from '../../autoscaler/inference/types';
import { aFunction, cap, observe, replica } from './fixtures';

const make = (name: string, params = {}) => createPolicy(name, params, { capability: cap() });
const spec = aFunction().maxScale(20).build();

/** Runs `ticks` one-second decisions with the same observation; returns the last decision. */
function hold(p: InferencePolicy<unknown>, obs: Observation, ticks: number) {
  let s = p.initialState(spec);
  let last;
  for (let t = 1; t <= ticks; t++) {
    last = p.decide(spec, s, obs, t * 1000);
    s = last.nextState;
  }
  return last!.decision;
}

describe('registry', () => {
  test('every baseline is registered by name', () => {
    expect(policyNames()).toEqual(expect.arrayContaining(['hybrid', 'kpa', 'static-share', 'openfaas-rps', 'oneshot', 'aiad', 'dilu-horizontal']));
  });
  test('unknown names list the known ones', () => expect(() => policy('nope')).toThrow(/unknown inference policy "nope".*kpa/));
});

describe('baselines', () => {
  const one = [replica('r1', 'g1', 1, 1)];
  test.each([
    { name: 'kpa panics on 10 concurrent on 1 pod: ⌈10 / (1·0.7)⌉ = 15', policy: 'kpa', obs: observe(0, one, { inFlight: 2, queueLength: 8 }), ticks: 1,
      want: 15 },
    { name: 'kpa stable at low concurrency keeps 1', policy: 'kpa', obs: observe(0, one, { inFlight: 0 }), ticks: 3, want: 1 },
    { name: 'static-share (fixed share): 100 req/s at 25 req/s per (0.3, 0.5) replica → ⌈100 / (0.9·25)⌉ = 5', policy: 'static-share',
      params: { perModel: false }, obs: observe(100, one), ticks: 1, want: 5 },
    { name: 'openfaas-rps: 100 req/s / (50 × 0.9) → 3', policy: 'openfaas-rps', obs: observe(100, one), ticks: 1, want: 3 },
    { name: 'oneshot: p99 at 2× SLO for 30 s doubles (after the 30th second)', policy: 'oneshot',
      obs: observe(10, [replica('a', 'g1', 1, 1), replica('b', 'g2', 1, 1)], { latencyMs: { p50: 300, p95: 380, p99: 400 } }), ticks: 31, want: 4 },
    { name: 'oneshot waits 30 s', policy: 'oneshot', obs: observe(10, one, { latencyMs: { p50: 300, p95: 380, p99: 400 } }), ticks: 30, want: 1 },
    { name: 'aiad adds one after 30 s overloaded', policy: 'aiad', obs: observe(10, [replica('a', 'g1', 1, 1), replica('b', 'g2', 1, 1)],
      { latencyMs: { p50: 300, p95: 380, p99: 400 } }), ticks: 31, want: 3 },
    { name: 'aiad removes one after 5 min underloaded', policy: 'aiad', obs: observe(1, [replica('a', 'g1', 1, 1), replica('b', 'g2', 1, 1)],
      { latencyMs: { p50: 20, p95: 20, p99: 20 } }), ticks: 301, want: 1 },
    { name: 'dilu-horizontal (fixed share) scales out after 20 of 40 samples above capacity (100 / 25 req/s → 4)', policy: 'dilu-horizontal',
      params: { profile: false }, obs: observe(100, [replica('a', 'g1', 0.3, 0.5)]), ticks: 20, want: 4 },
    { name: 'dilu-horizontal waits before 20 samples', policy: 'dilu-horizontal', params: { profile: false }, obs: observe(100, [replica('a', 'g1', 0.3, 0.5)]),
      ticks: 19, want: 1 },
  ] as Array<{ name: string; policy: string; params?: object; obs: Observation; ticks: number; want: number }>)('$name', ({ policy: name, params, obs, ticks,
    want }) => {
    expect(hold(make(name, params), obs, ticks).replicas).toBe(want);
  });

  test('kpa gives each replica a whole GPU; static-share packs fractional ones SM-aligned', () => {
    const k = hold(make('kpa'), observe(0, one, { inFlight: 3 }), 1);
    expect(k.add.every((a) => a.smShare === 1 && a.quota === 1 && a.gpu.startsWith('new:'))).toBe(true);
    const s = hold(make('static-share', { perModel: false }), observe(60, [replica('a', 'g1', 0.3, 0.5)]), 1);
    expect(s.add[0]).toMatchObject({ gpu: 'g1', smShare: 0.3, quota: 0.5 });
  });

  test('static-share per model: the smallest s·q whose batch-1 latency meets the SLO (faster on equal share)', () => {
    // synthetic profile: 20 ms / q at s ≥ 0.2, 30 ms / q below; SLO 200 ms → s·q = 0.02 either as
    // (0.1, 0.2) at 150 ms or (0.2, 0.1) at 200 ms; the faster wins
    const s = hold(make('static-share', { select: 'smallest' }), observe(60, [replica('a', 'g1', 0.1, 0.2)]), 1);
    expect(s.add.length).toBeGreaterThan(0);
    expect(s.add[0]).toMatchObject({ smShare: 0.1, quota: 0.2 });
    const tight = aFunction().slo(25).build();
    const p = make('static-share', { select: 'smallest' });
    const d = p.decide(tight, p.initialState(tight), observe(60, []), 1000).decision;
    expect(d.add[0]).toMatchObject({ smShare: 0.2, quota: 0.8 }); // 20 ms / 0.8 = 25 ms
  });

  test('static-share per model, FaST-GShare\'s profiler (default): the most batch-1 throughput per s·q within headroom × SLO', () => {
    // same profile: throughput per resource is 1000/30/0.1 = 333 /s at s = 0.1 (any q), 1000/20/s at s ≥ 0.2
    // (250 at 0.2); SLO 200 ms × headroom 0.2 = 40 ms → at s = 0.1 only q ≥ 0.75; equal keys: the faster, q = 1
    const p = make('static-share', { headroom: 0.2 });
    const fn = aFunction().slo(200).build();
    expect(p.decide(fn, p.initialState(fn), observe(60, []), 1000).decision.add[0]).toMatchObject({ smShare: 0.1, quota: 1 });
    // a looser headroom keeps the same per-resource throughput at a smaller quota's latency limit: still s = 0.1
    const loose = make('static-share', { headroom: 1 });
    expect(loose.decide(fn, loose.initialState(fn), observe(60, []), 1000).decision.add[0]).toMatchObject({ smShare: 0.1 });
    expect(() => make('static-share', { select: 'best' })).toThrow(/select must be rpr or smallest/);
    expect(() => make('static-share', { headroom: 0 })).toThrow(/headroom must be in/);
  });

  test('dilu-horizontal per model, Dilu\'s profiler (default): the largest throughput per SM rate whose batch latency meets the SLO, whole time quota', () => {
    // the synthetic profile's batch-1 latency is 20 ms / q at s ≥ 0.2, 30 ms / q below: at q = 1 the
    // throughput per SM rate is 33.3 / 0.1 = 333 at s = 0.1, best, and 30 ms meets a 200 ms SLO
    const p = make('dilu-horizontal');
    const fn = aFunction().slo(200).build();
    const add = p.decide(fn, p.initialState(fn), observe(60, []), 1000).decision.add[0];
    expect(add).toMatchObject({ smShare: 0.1, quota: 1 });
  });

  test('fixed-configuration policies set a replica started at another quota (min_scale at deploy) to their own', () => {
    // the live platform starts min_scale replicas before any decision, at quota 1
    const s = hold(make('static-share', { perModel: false }), observe(10, [replica('a', 'g1', 1, 1)]), 1);
    expect(s.quotas).toEqual([{ replicaId: 'a', quota: 0.5 }]);
    const again = hold(make('static-share', { perModel: false }), observe(10, [replica('a', 'g1', 0.3, 0.5)]), 1);
    expect(again.quotas).toEqual([]);
    const k = hold(make('kpa'), observe(0, [replica('a', 'g1', 1, 0.4)], { inFlight: 0 }), 1);
    expect(k.quotas).toEqual([{ replicaId: 'a', quota: 1 }]); // a whole device, as KPA runs it
  });

  test('parameters are configurable and validated', () => {
    expect(hold(make('openfaas-rps', { target: 10 }), observe(100, one), 1).replicas).toBe(12);
    expect(() => make('kpa', { stableWindowS: 'long' })).toThrow(/kpa: stableWindowS must be a number/);
  });
});
