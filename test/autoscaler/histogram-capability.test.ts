import { ProfileCapability } from '../../autoscaler/rapp/profile-capability';
import { bucketIndex, percentileFromHistogram } from '../../autoscaler/inference/histogram';
import { LATENCY_BUCKETS_MS } from '../../autoscaler/inference/types';
import { cap } from './fixtures';
import { LATENCY_BUCKETS_MS as GATEWAY_BUCKETS } from '../../gateway/metrics/second-window';

describe('latency histogram', () => {
  test('buckets are the gateway\'s', () => expect(LATENCY_BUCKETS_MS).toEqual(GATEWAY_BUCKETS));
  test.each([
    { ms: 0.5, i: 0 },
    { ms: 20, i: 5 },
    { ms: 21, i: 6 },
    { ms: 50, i: 9 },
    { ms: 200, i: 13 },
    { ms: 1e6, i: 20 },
  ])('bucketIndex($ms) = $i', ({ ms, i }) => expect(bucketIndex(ms)).toBe(i));
  test.each([
    { name: 'p50 inside the 20-25 bucket', counts: [0, 0, 0, 0, 0, 0, 10], p: 50, want: 22.5 },
    { name: 'p99 across buckets', counts: [...new Array(9).fill(0), 90, 10], p: 99, want: 50 + 25 * (9 / 10) },
    { name: 'open bucket answers its lower bound', counts: [...new Array(20).fill(0), 5], p: 99, want: 10000 },
  ])('$name', ({ counts, p, want }) => expect(percentileFromHistogram(counts, p)).toBeCloseTo(want, 9));
  test('empty is NaN', () => expect(percentileFromHistogram([0, 0], 50)).toBeNaN());
});

describe('profile capability', () => {
  const c = cap();
  test.each([
    { name: 'grid point', b: 1, s: 0.5, q: 0.5, want: 40 },
    { name: 'quota between points interpolates the rate', b: 1, s: 0.5, q: 0.55, want: 20 / 0.55 },
    { name: 'below the smallest quota scales 1/q', b: 1, s: 0.5, q: 0.05, want: 400 },
    { name: 'SM clamps above the grid', b: 1, s: 1.2, q: 1, want: 20 },
  ])('$name', ({ b, s, q, want }) => expect(c.latencyMs('f', b, s, q)).toBeCloseTo(want, 6));
  test('capability = batch / latency in req/s', () => expect(c.capability('f', 4, 0.5, 1)).toBeCloseTo((4 * 1000) / (20 * Math.pow(4, 0.3)), 6));
  test('unknown function has no capability', () => {
    expect(c.capability('nope', 1, 1, 1)).toBe(0);
    expect(c.latencyMs('nope', 1, 1, 1)).toBe(Infinity);
  });
  test('sparse deploy-time profile (CPU device: SM 1, three quotas) still answers', () => {
    const p = new ProfileCapability({ cpu: [0.2, 0.5, 1].map((q) => ({ batch: 1, smShare: 1, quota: q, latencyMs: 10 / q })) });
    expect(p.capability('cpu', 1, 1, 0.35)).toBeCloseTo(35, 6);
  });
  test("belowMeasured 'refuse' (the live loop's): no capacity under the smallest measured quota, the rest unchanged", () => {
    const pts = [0.25, 0.5, 1].map((q) => ({ batch: 1, smShare: 1, quota: q, latencyMs: 10 / q }));
    const live = new ProfileCapability({ cpu: pts }, { belowMeasured: 'refuse' });
    const sim = new ProfileCapability({ cpu: pts });
    expect(live.capability('cpu', 1, 1, 0.1)).toBe(0);
    expect(live.latencyMs('cpu', 1, 1, 0.2)).toBe(Infinity);
    expect(sim.latencyMs('cpu', 1, 1, 0.1)).toBeCloseTo(100, 6); // the simulator's extrapolation
    expect(live.latencyMs('cpu', 1, 1, 0.25)).toBeCloseTo(40, 6);
    expect(live.capability('cpu', 1, 1, 0.35)).toBeCloseTo(sim.capability('cpu', 1, 1, 0.35), 9);
    expect(live.capability('cpu', 2, 1, 1)).toBeCloseTo(sim.capability('cpu', 2, 1, 1), 9); // above the largest batch: still answered
  });
});
