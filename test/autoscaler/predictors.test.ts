import KalmanFilter from 'kalmanjs';
import { kalman, lastValue, movingAverage, normalQuantile, upper } from '../../autoscaler/inference/predictors';

const run = <S>(p: { init(): S; observe(s: S, x: number): S }, xs: number[]) => xs.reduce((s, x) => p.observe(s, x), p.init());

describe('predictors', () => {
  test.each([
    { name: 'last-value', p: lastValue, xs: [1, 5, 3], mean: 3 },
    { name: 'moving-average(3)', p: movingAverage(3), xs: [100, 1, 2, 3], mean: 2 },
  ])('$name forecasts $mean', ({ p, xs, mean }) => {
    expect(p.forecast(run(p as never, xs) as never).mean).toBeCloseTo(mean, 9);
  });

  test('Kalman matches HAS-GPU Sec. 3.3 equations step by step (Q = 1, D = 10)', () => {
    const k = kalman({ processNoise: 1, measurementNoise: 10 });
    const xs = [10, 12, 30, 28, 5];
    let s = k.init();
    let R = NaN;
    let P = NaN;
    for (const z of xs) {
      s = k.observe(s, z);
      if (Number.isNaN(R)) {
        R = z;
        P = 10;
      } else {
        const Rp = R;
        const Pp = P + 1;
        const K = Pp / (Pp + 10);
        R = Rp + K * (z - Rp);
        P = (1 - K) * Pp;
      }
      expect(s.x).toBeCloseTo(R, 9);
      expect(s.cov).toBeCloseTo(P, 9);
    }
    expect(k.forecast(s).std).toBeCloseTo(Math.sqrt(P + 1 + 10), 9);
  });

  test('Kalman is pure: the same state gives the same next state', () => {
    const k = kalman();
    const s = run(k, [3, 4, 5]);
    expect(k.observe(s, 9)).toEqual(k.observe(s, 9));
    expect(s).toEqual(run(k, [3, 4, 5]));
  });

  test('kalmanjs is the filter underneath', () => {
    const kf = new KalmanFilter({ R: 1, Q: 10 });
    [10, 12, 30].forEach((z) => kf.filter(z));
    expect(run(kalman(), [10, 12, 30]).x).toBeCloseTo(kf.x, 12);
  });

  test.each([
    { p: 0.5, z: 0 },
    { p: 0.9, z: 1.2815515655 },
    { p: 0.99, z: 2.3263478740 },
    { p: 0.01, z: -2.3263478740 },
  ])('normalQuantile($p) = $z', ({ p, z }) => expect(normalQuantile(p)).toBeCloseTo(z, 6));

  test('upper quantile provisioning adds z·std', () => {
    expect(upper({ mean: 10, std: 2 }, 0.9)).toBeCloseTo(10 + 2 * 1.2815515655, 6);
    expect(upper({ mean: 0, std: 1 }, 0.1)).toBe(0);
  });
});
