import { cheapestSizing, quotaFor, replicaLatencyMs } from '../../../autoscaler/multitenant/mlfaas/latency';
import { freshForecast, observeMinutes, rateAt } from '../../../autoscaler/multitenant/mlfaas/forecast';
import { DEFAULT_MLFAAS_PARAMS } from '../../../autoscaler/multitenant/mlfaas/params';

const m = { percentile: 0.99, rhoMax: 0.9 };

describe('mlfaas latency model (replicas at a CPU quota)', () => {
  it('a replica at quota q serves in p/q, and above ρmax the model predicts a miss', () => {
    expect(replicaLatencyMs(m, 180, 0, 1, 0.5)).toBe(360);
    // 4 replicas at quota 0.5 carry 4·0.5/0.18 = 11.1 req/s at ρ = 1; 10.5 req/s is ρ = 0.945 > 0.9
    expect(replicaLatencyMs(m, 180, 10.5, 4, 0.5)).toBe(Infinity);
    expect(Number.isFinite(replicaLatencyMs(m, 180, 9, 4, 0.5))).toBe(true);
  });

  it('quotaFor finds the smallest quota that meets the target, null when a whole CPU misses', () => {
    const q = quotaFor(m, 180, 10, 3, 576, 0.01)!;
    expect(q).toBeGreaterThan(0.5);
    expect(q).toBeLessThan(1);
    expect(replicaLatencyMs(m, 180, 10, 3, q)).toBeLessThanOrEqual(576);
    expect(replicaLatencyMs(m, 180, 10, 3, q - 0.01)).toBeGreaterThan(576);
    expect(quotaFor(m, 180, 20, 3, 576, 0.01)).toBeNull();
  });

  it('a fractional CPU share is cheaper than whole replicas (what Faro must round up)', () => {
    const s = cheapestSizing(m, 180, 10, 576, 0.01, 36)!;
    let whole = 1;
    while (replicaLatencyMs(m, 180, 10, whole, 1) > 576) whole++;
    expect(s.cpu).toBeLessThan(whole);
    expect(s.cpu).toBeGreaterThan((10 * 180) / 1000);
  });
});

describe('mlfaas forecast (Kalman over completed minutes, measured band)', () => {
  const p = DEFAULT_MLFAAS_PARAMS.forecast;

  it('follows a steady rate and narrows its band; a jump widens it', () => {
    let s = freshForecast(p);
    const steady = Array.from({ length: 60 }, () => 600);
    s = observeMinutes(p, s, steady);
    expect(rateAt(s, 0, 1)).toBeCloseTo(10, 1);
    const narrow = rateAt(s, 2, 1) - rateAt(s, 0, 1);
    expect(narrow).toBeLessThan(0.5);
    s = observeMinutes(p, s, [...steady, 1200]);
    expect(rateAt(s, 2, 1) - rateAt(s, 0, 1)).toBeGreaterThan(narrow * 4);
  });

  it('consumes only minutes it has not seen and knows nothing before the first', () => {
    const s0 = freshForecast(p);
    expect(Number.isNaN(rateAt(s0, 0, 1))).toBe(true);
    const s1 = observeMinutes(p, s0, [600, 600]);
    expect(observeMinutes(p, s1, [600, 600])).toBe(s1);
    expect(s1.seen).toBe(2);
  });
});
