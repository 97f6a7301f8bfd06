/**
 * Issue 26: the hybrid policy's decision carries the load forecast it planned with (R, the
 * Kalman forecast's q0.1..q0.9 band, the observed rate), for display only: the decision itself is
 * the same as without it, and the live decider passes it on whatever its guard or a pin did.
 */
import { hybrid } from '../../autoscaler/inference/hybrid';
import { kalman, normalQuantile } from '../../autoscaler/inference/predictors';
import { createPolicy } from '../../autoscaler/inference/registry';
import { decideLive, DecideInput } from '../../autoscaler/live/decider';
import type { InferencePolicy } from '../../autoscaler/inference/types';
import { aFunction, cap, observe, replica } from './fixtures';

const policy = (params = {}) => hybrid(params, { capability: cap() }) as InferencePolicy<unknown>;

/** Runs `rates` (req/s, one a second) through the policy; the last result. */
function run(p: InferencePolicy<unknown>, rates: number[], spec = aFunction().build()) {
  let st = p.initialState(spec);
  let out!: ReturnType<InferencePolicy<unknown>['decide']>;
  rates.forEach((r, i) => {
    out = p.decide(spec, st, observe(r, [replica('a', 'g0', 1, 1)]), 1000 * (i + 1));
    st = out.nextState;
  });
  return out;
}

describe('hybrid: the forecast on its decision', () => {
  test.each([
    { name: 'default (shared, with a lead)', params: {} },
    { name: 'mdc (Algorithm 1)', params: { sloModel: 'mdc' } },
  ])('$name: R as the reason says, the Kalman q0.1..q0.9 band around its mean, the observed rate', ({ params }) => {
    const rates = [10, 12, 11, 13, 12];
    const out = run(policy(params), rates);
    const f = out.forecast!;
    expect(f).toBeDefined();
    expect(f.observed).toBe(12);
    expect(f.label).toBe('kalman q0.9');
    // R is the rate the reason names
    const R = Number(/R=([\d.]+) req\/s/.exec(out.reason)![1]);
    expect(f.rps).toBeCloseTo(R, 1);
    // the same Kalman filter by hand: the band is mean ∓ z0.9·std
    const k = kalman({ processNoise: 1, measurementNoise: 10 });
    let s = k.init();
    for (const r of rates) s = k.observe(s, r);
    const { mean, std } = k.forecast(s);
    const z = normalQuantile(0.9);
    expect(f.mean).toBeCloseTo(mean, 9);
    expect(f.lo).toBeCloseTo(Math.max(0, mean - z * std), 9);
    expect(f.hi).toBeCloseTo(mean + z * std, 9);
    expect(f.lo).toBeLessThan(f.mean);
    expect(f.hi).toBeGreaterThan(f.mean);
    // R is the q0.9 (plus any lead, never negative): at least the band's top
    expect(f.rps).toBeGreaterThanOrEqual(f.hi - 1e-9);
  });

  test('a band never goes below 0 (an idle function: the mean is 0, the lower quantile is cut)', () => {
    const f = run(policy(), [0, 0, 0]).forecast!;
    expect(f.mean).toBe(0);
    expect(f.lo).toBe(0);
    expect(f.hi).toBeGreaterThan(0);
  });

  test('the decision is the same as the one a policy without the forecast field makes (display only)', () => {
    const rates = [5, 40, 80, 120, 60, 10];
    const a = run(policy(), rates);
    const b = run(policy(), rates);
    expect(a.decision).toEqual(b.decision);
    expect(Object.keys(a.decision).sort()).toEqual(['add', 'quotas', 'reason', 'remove', 'replicas', 'weights']);
  });

  test('failing case: a policy without a forecaster (a baseline) and the scale-to-zero decision leave it absent', () => {
    const kpa = createPolicy('kpa', {}, { capability: cap() });
    const out = kpa.decide(aFunction().build(), kpa.initialState(aFunction().build()), observe(10, [replica('a', 'g0', 1, 1)]), 1000);
    expect(out.forecast).toBeUndefined();
    const spec = { ...aFunction().minScale(0).build(), idleToZeroMs: 2000 };
    const zero = run(policy(), [0, 0, 0], spec); // idle from 1 s: 2 s idle at 3 s
    expect(zero.decision.replicas).toBe(0);
    expect(zero.forecast).toBeUndefined();
  });
});

describe('decideLive passes the forecast on', () => {
  const base = (over: Partial<DecideInput> = {}): DecideInput => ({
    policy: policy(), spec: aFunction().build(), obs: observe(20, [replica('a', 'g0', 1, 1)]), now: 1000, capability: cap(),
    activeNow: false, hasProfile: true, desired: 1, sloGuardS: 5, sloGuardHoldS: 60, ...over,
  });

  test('with the decision, and under a manual pin', () => {
    const free = decideLive(base());
    expect(free.forecast?.observed).toBe(20);
    const pinned = decideLive(base({ pin: { replicas: 2, at: 0, until: Date.UTC(2030, 0, 1) }, desired: 2 }));
    expect(pinned.pinned).toBe(2);
    expect(pinned.forecast?.observed).toBe(20);
  });

  test('not when the policy did not run (no profile: a hold)', () => {
    const out = decideLive(base({ hasProfile: false }));
    expect(out.skipped).toMatch(/no capability profile/);
    expect(out.forecast).toBeUndefined();
  });
});
