import { hybrid } from '../../../autoscaler/inference/hybrid';
import type { HybridState } from '../../../autoscaler/inference/hybrid';
import { idleLongEnough, idleSince } from '../../../autoscaler/inference/idle';
import { kalman, upper } from '../../../autoscaler/inference/predictors';
import { zeroAfterMs } from '../../../autoscaler/live/zero';
import { parseDurationMs } from '../../../gateway/registry/manual-scale';
import { aFunction, cap, observe, replica } from '../fixtures';

describe('scale to zero', () => {
  it('the Kalman forecast floors near 4.7 req/s with nothing observed (why the policy never reached 0)', () => {
    const k = kalman();
    let s = k.init();
    for (let i = 0; i < 120; i++) s = k.observe(s, 0);
    const r = upper(k.forecast(s), 0.9);
    expect(k.forecast(s).mean).toBeCloseTo(0, 6);
    expect(r).toBeGreaterThan(4.5);
    expect(r).toBeLessThan(5);
  });

  it('hybrid: a min_scale 0 function idle for its window decides 0 replicas, and holds at 0', () => {
    const p = hybrid({}, { capability: cap() });
    const spec = { ...aFunction().minScale(0).build(), idleToZeroMs: 30_000 };
    const reps = [replica('a', 'g0', 1, 0.1)];
    let st: HybridState = p.initialState(spec);
    let t = 0;
    let d = p.decide(spec, st, observe(0, reps), t);
    for (; t <= 29_000; t += 1000) {
      d = p.decide(spec, st, observe(0, reps), t);
      expect(d.decision.replicas).toBeGreaterThanOrEqual(1);
      st = d.nextState;
    }
    d = p.decide(spec, st, observe(0, reps), 30_000);
    expect(d.decision.replicas).toBe(0);
    expect(d.decision.remove).toEqual(['a']);
    expect(d.reason).toMatch(/idle 30.0 s ≥ 30.0 s with min_scale 0: scale to zero/);
    // at zero with no work it does not add the R_min replica back
    const z = p.decide(spec, d.nextState, observe(0, []), 31_000);
    expect(z.decision.replicas).toBe(0);
    expect(z.decision.add).toEqual([]);
    // a request (the gateway woke it): the ordinary policy again, and the idle run restarts
    const w = p.decide(spec, z.nextState, observe(3, [replica('b', 'g0', 1, 1, { ready: false })]), 32_000);
    expect(w.decision.replicas).toBeGreaterThanOrEqual(1);
    const after = p.decide(spec, w.nextState, observe(0, [replica('b', 'g0', 1, 1)]), 33_000);
    expect(after.decision.replicas).toBeGreaterThanOrEqual(1);
  });

  it('hybrid: activity inside the window restarts it; min_scale 1 or no window never goes to zero', () => {
    const p = hybrid({}, { capability: cap() });
    const spec = { ...aFunction().minScale(0).build(), idleToZeroMs: 10_000 };
    const reps = [replica('a', 'g0', 1, 0.1)];
    let st = p.initialState(spec);
    for (let t = 0; t <= 40_000; t += 1000) {
      const d = p.decide(spec, st, observe(t % 8000 === 0 ? 1 : 0, reps), t);
      expect(d.decision.replicas).toBeGreaterThanOrEqual(1);
      st = d.nextState;
    }
    for (const s of [{ ...aFunction().minScale(1).build(), idleToZeroMs: 1000 }, aFunction().minScale(0).build()]) {
      let x = p.initialState(s);
      for (let t = 0; t <= 20_000; t += 1000) {
        const d = p.decide(s, x, observe(0, reps), t);
        expect(d.decision.replicas).toBeGreaterThanOrEqual(1);
        x = d.nextState;
      }
    }
  });

  it('idle run: restarts on work or with no replica', () => {
    const q = { arrivals: 0, queueLength: 0, inFlight: 0, replicas: 1 };
    expect(idleSince(null, q, 5)).toBe(5);
    expect(idleSince(5, q, 9)).toBe(5);
    expect(idleSince(5, { ...q, inFlight: 1 }, 9)).toBeNull();
    expect(idleSince(5, { ...q, replicas: 0 }, 9)).toBeNull();
    expect(idleLongEnough(5, 4, 9)).toBe(true);
    expect(idleLongEnough(5, 5, 9)).toBe(false);
    expect(idleLongEnough(null, 0, 9)).toBe(false);
  });

  it('zero-duration: annotation > label > MLFAAS_SCALE_ZERO_DEFAULT > 15m; only with min_scale 0', () => {
    expect(parseDurationMs('15m')).toBe(900_000);
    expect(parseDurationMs('1h30m')).toBe(5_400_000);
    expect(parseDurationMs('3s')).toBe(3000);
    expect(parseDurationMs('250ms')).toBe(250);
    expect(parseDurationMs('7')).toBe(7000);
    expect(parseDurationMs('soon')).toBeUndefined();
    const k = 'com.openfaas.scale.zero-duration';
    expect(zeroAfterMs(0, {}, {}, {})).toBe(900_000);
    expect(zeroAfterMs(0, {}, {}, { MLFAAS_SCALE_ZERO_DEFAULT: '2m' })).toBe(120_000);
    expect(zeroAfterMs(0, { [k]: '30s' }, {}, {})).toBe(30_000);
    expect(zeroAfterMs(0, { [k]: '30s' }, { [k]: '3s' }, {})).toBe(3000);
    expect(zeroAfterMs(0, { [k]: 'bogus' }, {}, {})).toBe(900_000);
    expect(zeroAfterMs(1, { [k]: '3s' }, {}, {})).toBeUndefined();
  });
});
