import { cfsFinish } from '../../autoscaler/sim/cfs';
import { simulate, SimFunction } from '../../autoscaler/sim/engine';
import { ProfileCapability } from '../../autoscaler/rapp/profile-capability';
import { aFunction } from './fixtures';

describe('CFS bandwidth service model', () => {
  test('sparse work runs at full speed inside the period budget', () => {
    const st = { period: -1, used: 0 };
    // 20 ms of work at share 0.3 of a 100 ms period (30 ms budget): done at full speed
    expect(cfsFinish(0.01, 0.02, 0.3, 0.1, st)).toBeCloseTo(0.03, 9);
    expect(st).toEqual({ period: 0, used: expect.closeTo(0.02, 9) });
  });

  test('work past the budget waits for the next period (throttled), no carry-over', () => {
    const st = { period: -1, used: 0 };
    // 50 ms of work from t = 0 at share 0.3: 30 ms now, throttled to 100 ms, 20 ms more
    expect(cfsFinish(0, 0.05, 0.3, 0.1, st)).toBeCloseTo(0.12, 9);
    // the next batch in the same period has only 10 ms of budget left
    expect(cfsFinish(0.12, 0.02, 0.3, 0.1, st)).toBeCloseTo(0.21, 9);
    // a later period starts with a whole budget (unused budget is not carried over)
    expect(cfsFinish(0.55, 0.03, 0.3, 0.1, st)).toBeCloseTo(0.58, 9);
  });

  test('a saturated replica gets its share of full speed in the long run', () => {
    const st = { period: -1, used: 0 };
    let t = 0;
    let n = 0;
    while (t < 10) {
      t = cfsFinish(t, 0.007, 0.25, 0.1, st);
      n++;
    }
    // full speed: 1 / 7 ms = 142.9/s; at share 0.25: 35.7/s
    expect(n / t).toBeGreaterThan(0.24 / 0.007);
    expect(n / t).toBeLessThan(0.26 / 0.007);
  });

  test('a budget that ends at a period boundary moves on (no stall at the boundary)', () => {
    const st = { period: -1, used: 0 };
    expect(cfsFinish(0.07, 0.05, 0.5, 0.1, st)).toBeCloseTo(0.12, 9);
    expect(cfsFinish(0.3, 0.1, 1, 0.1, st)).toBeCloseTo(0.4, 9);
  });
});

/** A CPU-like profile: 25 ms a request at quota 1, throughput ∝ quota (measured at saturation). */
const cpuProfile = () =>
  new ProfileCapability(
    { f: [1, 0.5, 0.25].map((q) => ({ batch: 1, smShare: 1, quota: q, latencyMs: 25 / q, throughput: (1000 / 25) * q })) },
    { belowMeasured: 'refuse' },
  );
const sparse = (): SimFunction => ({ spec: aFunction().slo(60).maxScale(2).build(), model: 'f', counts: new Array(60).fill(4), intervalS: 1 });

describe('simulator under CFS with the online correction', () => {
  test('at a fixed quota, sparse requests see full-speed latency under CFS, latency ÷ quota without', () => {
    const o = { policy: 'static-share', params: { perModel: false, smShare: 1, quota: 0.5 }, capability: cpuProfile(), seed: 3 };
    const plain = simulate([sparse()], o);
    const cfs = simulate([sparse()], { ...o, cfsPeriodMs: 100 });
    expect(plain.p50).toBeGreaterThanOrEqual(49);
    expect(cfs.p50).toBeLessThan(30);
    expect(cfs.requests).toBe(plain.requests);
  });

  test('the correction learns the full-speed latency and the hybrid holds less quota (as live)', () => {
    const o = { policy: 'hybrid', capability: cpuProfile(), seed: 5, cfsPeriodMs: 100, coldStartS: 3 };
    const without = simulate([sparse()], o);
    const corrected = simulate([sparse()], { ...o, correction: true });
    expect(corrected.gpuSeconds).toBeLessThan(without.gpuSeconds);
    expect(corrected.violationRate).toBeLessThan(0.02);
  });
});

describe('simulator start state', () => {
  test('a min-0 function warm at the start has its woken replica up at t = 0 (no cold start)', () => {
    const f = (warm: boolean): SimFunction => ({ spec: { ...aFunction().slo(200).minScale(0).maxScale(2).build(), idleToZeroMs: 20_000 }, model: 'f',
      counts: new Array(20).fill(5), intervalS: 1, warmAtStart: warm });
    const o = { policy: 'hybrid', capability: cpuProfile(), seed: 2, coldStartS: 3 };
    const cold = simulate([f(false)], o);
    const warm = simulate([f(true)], o);
    expect(cold.coldStarts).toBeGreaterThanOrEqual(1);
    expect(warm.coldStarts).toBe(0);
    expect(warm.violations).toBeLessThan(cold.violations);
  });
});
