import { allocationSeries, integrateCost, scaleToZeroS } from '../../bench/live/cost';
import { fmt, fmtSeeds, fmtViolationRatios, overSeeds, ratio, summarise, violationRatio, worstRelError } from '../../bench/live/outcomes';
import { countsPerSecond, poissonSchedule, segmentRates } from '../../bench/live/schedule';

describe('bench:live schedule', () => {
  it('scales a segment to its peak and stretches time', () => {
    expect(segmentRates([1, 2, 4, 8], 1, 3, 10)).toEqual([2.5, 5, 10]);
    expect(segmentRates([1, 2], 0, 4, 4, 2)).toEqual([2, 2, 4, 4]);
  });

  it('draws Poisson arrivals at the given rates, the same for the same seed', () => {
    const rates = [...new Array(100).fill(50), ...new Array(100).fill(0), ...new Array(100).fill(10)];
    const a = poissonSchedule(rates, 7);
    expect(poissonSchedule(rates, 7)).toEqual(a);
    expect(poissonSchedule(rates, 8)).not.toEqual(a);
    const c = countsPerSecond(a, 300);
    const sum = (xs: number[]) => xs.reduce((x, y) => x + y, 0);
    expect(sum(c.slice(0, 100))).toBeGreaterThan(4500);
    expect(sum(c.slice(0, 100))).toBeLessThan(5500);
    expect(sum(c.slice(100, 200))).toBe(0);
    expect(sum(c.slice(200))).toBeGreaterThan(850);
    expect(sum(c.slice(200))).toBeLessThan(1150);
    for (let i = 1; i < a.length; i++) expect(a[i]).toBeGreaterThan(a[i - 1]);
  });
});

describe('bench:live cost', () => {
  const s = (t: number, ...r: Array<[string, number, number]>) => ({ t, replicas: r.map(([id, cores, quota]) => ({ id, cores, quota })) });
  it('integrates cores × quota × time and counts starts after the first sample', () => {
    const samples = [s(0, ['a', 1, 1]), s(1000, ['a', 1, 0.5], ['b', 2, 1]), s(3000, ['b', 2, 1]), s(4000), s(5000)];
    const c = integrateCost(samples);
    expect(c.coreSeconds).toBeCloseTo(1 + 2 * 2.5 + 2);
    expect(c.coldStarts).toBe(1);
    expect(c.maxReplicas).toBe(2);
    expect(scaleToZeroS(samples, 3500)).toBe(0.5);
    expect(scaleToZeroS(samples.slice(0, 3), 3500)).toBeUndefined();
    expect(allocationSeries(samples, 0, 2000, 2)).toEqual([(1 + 2.5) / 2, 2]);
  });
});

describe('bench:live outcomes', () => {
  it('counts over-SLO, failed and refused requests as violations, refused and failed as dropped', () => {
    const outs = [
      { at: 0, latencyMs: 10, status: 200 },
      { at: 1, latencyMs: 60, status: 200 },
      { at: 2, latencyMs: 5, status: 429 },
      { at: 3, latencyMs: 5, status: 0 },
      { at: 4, latencyMs: 5, status: 400 },
    ];
    const v = summarise(outs, 50);
    expect(v).toMatchObject({ requests: 5, violations: 4, dropped: 2, p50: 10, p99: 60 });
  });

  it('floors ratios and formats non-finite values', () => {
    expect(ratio(10, 0, 1)).toBe(10);
    expect(ratio(6, 3)).toBe(2);
    expect(fmt(ratio(1, 0))).toBe('n/a');
    expect(worstRelError([{ predicted: 12, measured: 10 }, { predicted: 5, measured: 10 }, { predicted: 3, measured: 0 }])).toBeCloseTo(0.5);
  });

  it('0 vs 0 violations is no discrimination, never a ratio of 1', () => {
    expect(violationRatio(0, 0)).toBeUndefined();
    expect(violationRatio(6, 0)).toBe(6);
    expect(violationRatio(0, 4)).toBe(0.25);
    expect(violationRatio(6, 3)).toBe(2);
    expect(fmtViolationRatios([undefined, undefined, undefined])).toBe('no-discrimination');
    expect(fmtViolationRatios([2, undefined, 4])).toBe('3.00[2.00-4.00]/2-of-3');
    expect(fmtViolationRatios([2, 1, 3])).toBe('2.00[1.00-3.00]');
    expect(fmtViolationRatios([1.5])).toBe('1.50');
  });

  it('summarises a figure over seeds as mean [min–max]', () => {
    expect(overSeeds([1, 2, 6, NaN])).toEqual({ n: 3, mean: 3, min: 1, max: 6 });
    expect(fmtSeeds(overSeeds([1, 2, 6]))).toBe('3.00 [1.00–6.00]');
    expect(fmtSeeds(overSeeds([2]), 1)).toBe('2.0');
    expect(fmtSeeds(overSeeds([]))).toBe('n/a');
  });
});
