import { CorrectedCapability } from '../../../autoscaler/live/corrected-capability';
import { CORRECTION, correctionStep } from '../../../autoscaler/live/correction';
import { addsCapacity, sloGuard, SloGuardState } from '../../../autoscaler/live/slo-guard';
import { ProfileCapability } from '../../../autoscaler/inference/capability';
import type { Decision } from '../../../autoscaler/inference/types';
import { aFunction, observe, replica, synthProfile } from '../fixtures';

const hold = (n: number): Decision => ({ replicas: n, quotas: [], add: [], remove: [], weights: {}, reason: 'hybrid: within [0.3, 0.9]·C' });
const lat = (p99: number, p50 = p99 / 2) => ({ p50, p95: p99, p99 });

describe('capability correction (EWMA in log space, clamped to [1/50, 2])', () => {
  const base = new ProfileCapability({ f: synthProfile() }); // batch 1 at quota 1: 20 ms, 50 req/s

  it('a replica 100x slower end to end than its profile drives k down to the 1/50 clamp, step by step', () => {
    let k = 0;
    const ks: number[] = [];
    for (let i = 0; i < 60; i++) {
      // idle queue: observed median 2000 ms vs predicted 20 ms
      k = correctionStep(k, 'f', observe(5, [replica('a', 'g0', 1, 1)], { latencyMs: lat(2500, 2000) }), base);
      ks.push(Math.exp(k));
    }
    expect(ks[0]).toBeGreaterThan(0.3); // one second moves it by the gain only (0.2 of the log gap)
    expect(ks[0]).toBeLessThan(0.5);
    for (let i = 1; i < ks.length; i++) expect(ks[i]).toBeLessThanOrEqual(ks[i - 1] + 1e-12);
    expect(ks[59]).toBeCloseTo(CORRECTION.min, 6);
  });

  it('saturated: observed throughput per replica vs predicted; never above 2; no completions: no change', () => {
    let k = 0;
    for (let i = 0; i < 100; i++) k = correctionStep(k, 'f', observe(30, [replica('a', 'g0', 1, 1, { throughputRps: 25 })], { queueLength: 40, latencyMs: lat(900, 500) }), base);
    expect(Math.exp(k)).toBeCloseTo(0.5, 2); // 25 of a predicted 50 req/s
    let up = 0;
    for (let i = 0; i < 100; i++) up = correctionStep(up, 'f', observe(5, [replica('a', 'g0', 1, 1)], { latencyMs: lat(2, 1) }), base);
    expect(Math.exp(up)).toBeCloseTo(CORRECTION.max, 6);
    expect(correctionStep(0.3, 'f', observe(0, [replica('a', 'g0', 1, 1)], { completions: 0 }), base)).toBe(0.3);
  });

  it('the wrapped capability scales rate by k and latency by 1/k, with a new profileKey', () => {
    const c = new CorrectedCapability(base);
    const before = c.profileKey('f');
    expect(before).toBe(base.profileKey('f'));
    c.setFactor('f', Math.log(0.1));
    const k = c.factor('f');
    expect(Math.abs(k - 0.1)).toBeLessThan(0.1 * 0.03); // quantised to 5 % steps in log space
    expect(c.capability('f', 1, 1, 1)).toBeCloseTo(base.capability('f', 1, 1, 1) * k, 6);
    expect(c.latencyMs('f', 1, 1, 1)).toBeCloseTo(base.latencyMs('f', 1, 1, 1) / k, 6);
    expect(c.profileKey('f')).not.toBe(before);
    const same = c.profileKey('f');
    c.setFactor('f', Math.log(0.1) + 0.001); // within the 5 % quantum: same surface, same key
    expect(c.profileKey('f')).toBe(same);
  });
});

describe('SLO guard', () => {
  const spec = aFunction().slo(50).maxScale(3).build();
  const run = (reps: ReturnType<typeof replica>[], p99s: number[], seconds = 5) => {
    let st: SloGuardState = { over: 0 };
    const fired: Array<Decision | undefined> = [];
    for (const p of p99s) {
      const g = sloGuard(st, spec, observe(600, reps, { latencyMs: lat(p) }), hold(reps.length), seconds);
      st = g.next;
      fired.push(g.decision);
    }
    return fired;
  };

  it('p99 over the SLO for 5 consecutive seconds raises the lowest quota first, and says why', () => {
    const fired = run([replica('a', 'g0', 1, 0.1), replica('b', 'g0', 1, 0.5)], [129, 129, 129, 129, 129]);
    expect(fired.slice(0, 4).every((d) => d === undefined)).toBe(true);
    expect(fired[4]!.quotas).toEqual([{ replicaId: 'a', quota: 0.2 }]);
    expect(fired[4]!.reason).toMatch(/^SLO guard: p99 129 ms > 50 ms for 5 s: quota a 0.1→0.2/);
  });

  it('at full quota: +1 replica within max_scale; at max_scale: keeps what it has', () => {
    const full = run([replica('a', 'g0', 1, 1)], [129, 129, 129, 129, 129]);
    expect(full[4]!.add).toHaveLength(1);
    expect(full[4]!.replicas).toBe(2);
    const atMax = run([replica('a', 'g0', 1, 1), replica('b', 'g0', 1, 1), replica('c', 'g0', 1, 1)], [99, 99, 99, 99, 99]);
    expect(atMax[4]!.add).toHaveLength(0);
    expect(atMax[4]!.remove).toHaveLength(0);
    expect(atMax[4]!.reason).toMatch(/at max_scale 3/);
  });

  it('a second within the SLO restarts the count; seconds without completions keep it', () => {
    const fired = run([replica('a', 'g0', 1, 1)], [129, 129, 129, 129, 40, 129, 129, 129, 129]);
    expect(fired.every((d) => d === undefined)).toBe(true);
    let st: SloGuardState = { over: 4 };
    st = sloGuard(st, spec, observe(0, [replica('a', 'g0', 1, 1)], { completions: 0 }), hold(1), 5).next;
    expect(st.over).toBe(4);
  });

  it('does not fire when the policy already adds capacity', () => {
    const reps = [replica('a', 'g0', 1, 0.5)];
    const up: Decision = { ...hold(1), quotas: [{ replicaId: 'a', quota: 0.7 }] };
    expect(addsCapacity(up, observe(1, reps))).toBe(true);
    const g = sloGuard({ over: 4 }, spec, observe(600, reps, { latencyMs: lat(129) }), up, 5);
    expect(g.decision).toBeUndefined();
    expect(g.next.over).toBe(0);
  });
});
