import { headline, meanInterval, pooledRatio } from '../../bench/inference/aggregate';
import { scaleToRate } from '../../bench/inference/report-set';

describe('inference headline aggregation', () => {
  test('mean and 95 % t-interval', () => {
    const r = meanInterval([1, 2, 3, 4, 5]);
    expect(r.mean).toBe(3);
    // sd = 1.5811, t(4) = 2.776 → half-width 1.963
    expect(r.hi - r.mean).toBeCloseTo(2.776 * Math.sqrt(2.5) / Math.sqrt(5), 6);
    expect(r.lo).toBeCloseTo(3 - (r.hi - 3), 9);
    expect(meanInterval([7]).lo).toBeNaN();
  });
  test('pooled ratio: Σ baseline ÷ Σ ours, zero violations of ours count as 1', () => {
    const t = { hybrid: { violations: 0, requests: 100, cost: 2 }, kpa: { violations: 5, requests: 100, cost: 20 } };
    expect(pooledRatio(t, 'kpa', 'hybrid', 'violations')).toBe(5);
    expect(pooledRatio(t, 'kpa', 'hybrid', 'cost')).toBe(10);
  });
  test('headline over seeds', () => {
    const seed = (v: number) => ({
      hybrid: { violations: v, requests: 1000, cost: 1 },
      'static-share': { violations: 4 * v, requests: 1000, cost: 3 },
      'static-share-hasgpu': { violations: 8 * v, requests: 1000, cost: 0.5 },
      kpa: { violations: 2 * v, requests: 1000, cost: 11 },
    });
    const h = headline([seed(10), seed(20), seed(5)]);
    expect(h.violationVsStatic.mean).toBe(4);
    expect(h.violationVsStatic.hi - h.violationVsStatic.lo).toBeCloseTo(0, 9);
    expect(h.violationVsStaticHasgpu.mean).toBe(8);
    expect(h.costVsKpa.mean).toBe(11);
    expect(h.kpaViolation.mean).toBe(2);
    expect(h.costVsKpa.n).toBe(3);
  });
  test('a reporting trace is scaled to the target mean rate, shape kept', () => {
    const s = scaleToRate([60, 120, 180], 60, 4);
    expect(s).toEqual([120, 240, 360]);
    expect(s.reduce((a, b) => a + b, 0) / 3 / 60).toBeCloseTo(4, 9);
  });
});
