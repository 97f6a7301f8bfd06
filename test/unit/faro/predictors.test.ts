import { naivePredictor, gaussianPredictor, oraclePredictor, normalQuantile, diffStd, sampleQuantile } from '../../../autoscaler/multitenant/predictors';

describe('minute predictors (Faro stand-ins)', () => {
  test.each([
    { q: 0.5, z: 0 }, { q: 0.6, z: 0.2533471031 }, { q: 0.9, z: 1.2815515655 }, { q: 0.99, z: 2.3263478740 }, { q: 0.01, z: -2.3263478740 },
  ])('Φ⁻¹($q) = $z', ({ q, z }) => {
    expect(normalQuantile(q)).toBeCloseTo(z, 7);
  });

  test('naive: last + z_q·sd(Δ)·√h over the last 15 minutes, clipped at 1', () => {
    const hist = [100, 110, 90, 120, 100];
    const sd = diffStd(hist);
    expect(sd).toBeCloseTo(Math.sqrt((100 + 400 + 900 + 400) / 4), 12); // Δ = 10, −20, 30, −20; mean 0
    const f = naivePredictor().forecast(0, hist, 7, 0.9);
    expect(f).toHaveLength(7);
    f.forEach((v, i) => expect(v).toBeCloseTo(100 + normalQuantile(0.9) * sd * Math.sqrt(i + 1), 9));
    expect(naivePredictor().forecast(0, hist, 3, 0.5)).toEqual([100, 100, 100]);
    expect(naivePredictor().forecast(0, [5, 1, 2], 2, 0.01).every((v) => v === 1)).toBe(true);
    // only the last 15 minutes count
    const long = [...new Array(20).fill(0).map((_, i) => (i % 2 ? 1000 : 0)), ...new Array(15).fill(50)];
    expect(naivePredictor().forecast(0, long, 2, 0.9)).toEqual([50, 50]);
    expect(naivePredictor().forecast(0, [], 7, 0.6)).toEqual([0]);
  });

  test('diffStd is the population sd of successive differences', () => {
    expect(diffStd([1, 3, 5])).toBe(0);
    expect(diffStd([0, 2, 2])).toBe(1);
    expect(diffStd([7])).toBe(0);
  });

  test('gaussian: sampled, seeded, near the analytic quantile, rising with q', () => {
    const hist = [200, 220, 190, 240, 210, 230, 205];
    const a = gaussianPredictor({ seed: 3 }).forecast(0, hist, 7, 0.6);
    const b = gaussianPredictor({ seed: 3 }).forecast(0, hist, 7, 0.6);
    expect(a).toEqual(b);
    const big = gaussianPredictor({ seed: 3, samples: 4000 }).forecast(0, hist, 7, 0.9);
    const exact = naivePredictor().forecast(0, hist, 7, 0.9);
    big.forEach((v, i) => expect(Math.abs(v - exact[i])).toBeLessThan(0.06 * exact[i]));
    const lo = gaussianPredictor({ seed: 5, samples: 2000 }).forecast(0, hist, 7, 0.6);
    const hi = gaussianPredictor({ seed: 5, samples: 2000 }).forecast(0, hist, 7, 0.9);
    expect(hi[6]).toBeGreaterThan(lo[6]);
  });

  test('sampleQuantile interpolates like numpy', () => {
    expect(sampleQuantile([1, 2, 3, 4], 0.5)).toBe(2.5);
    expect(sampleQuantile([1, 2, 3, 4], 0.6)).toBeCloseTo(2.8, 12);
  });

  test('oracle: the true next counts, whatever the quantile', () => {
    const trace = [[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]];
    const o = oraclePredictor(trace);
    expect(o.forecast(0, [1, 2], 7, 0.6)).toEqual([3, 4, 5, 6, 7, 8, 9]);
    expect(o.forecast(0, [1, 2], 7, 0.9)).toEqual([3, 4, 5, 6, 7, 8, 9]);
    expect(o.forecast(0, [1, 2, 3, 4, 5, 6, 7, 8], 7, 0.6)).toEqual([9, 10]);
    expect(o.forecast(0, new Array(10).fill(4), 7, 0.6)).toEqual([4]);
  });
});
