import { CorrectedCapability } from '../../../autoscaler/rapp/corrected-capability';
import { CORRECTION, correctionStep } from '../../../autoscaler/rapp/online-correction';
import { addsCapacity, freshGuard, GUARD_ALPHA, guardHolds, poissonTail, reducesCapacity, sloGuard,
  SloGuardState } from '../../../autoscaler/inference/stages/slo-guard';
import { countOver } from '../../../autoscaler/inference/histogram';
import { ProfileCapability } from '../../../autoscaler/rapp/profile-capability';
import { Decision, LATENCY_BUCKETS_MS } from '../../../autoscaler/inference/types';
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
      k = correctionStep(k, 'f', observe(5, [replica('a', 'g0', 1, 1)], { latencyMs: lat(2500, 2000) }), base, 'full-speed');
      ks.push(Math.exp(k));
    }
    expect(ks[0]).toBeGreaterThan(0.3); // one second moves it by the gain only (0.2 of the log gap)
    expect(ks[0]).toBeLessThan(0.5);
    for (let i = 1; i < ks.length; i++) expect(ks[i]).toBeLessThanOrEqual(ks[i - 1] + 1e-12);
    expect(ks[59]).toBeCloseTo(CORRECTION.min, 6);
  });

  it('saturated: observed throughput per replica vs predicted; never above 2; no completions: no change', () => {
    let k = 0;
    for (let i = 0; i < 100; i++) k = correctionStep(k, 'f', observe(30, [replica('a', 'g0', 1, 1, { throughputRps: 25 })],
      { queueLength: 40, latencyMs: lat(900, 500) }), base, 'full-speed');
    expect(Math.exp(k)).toBeCloseTo(0.5, 2); // 25 of a predicted 50 req/s
    let up = 0;
    for (let i = 0; i < 100; i++) up = correctionStep(up, 'f', observe(5, [replica('a', 'g0', 1, 1)], { latencyMs: lat(2, 1) }), base, 'full-speed');
    expect(Math.exp(up)).toBeCloseTo(CORRECTION.max, 6);
    expect(correctionStep(0.3, 'f', observe(0, [replica('a', 'g0', 1, 1)], { completions: 0 }), base, 'full-speed')).toBe(0.3);
  });

  it('under a budget per period an idle replica at quota 0.5 runs at full speed: no evidence of spare capacity (full-speed), k → 2 read at its quota', () => {
    let full = 0;
    let atQuota = 0;
    for (let i = 0; i < 60; i++) {
      // observed median 20 ms: the profile's batch-1 latency at quota 1 (40 ms at quota 0.5)
      const obs = observe(5, [replica('a', 'g0', 1, 0.5)], { latencyMs: lat(30, 20) });
      full = correctionStep(full, 'f', obs, base, 'full-speed');
      atQuota = correctionStep(atQuota, 'f', obs, base, 'at-quota');
    }
    expect(Math.exp(full)).toBeCloseTo(1, 6);
    expect(Math.exp(atQuota)).toBeGreaterThan(1.9);
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

describe('SLO guard (misses beyond chance over its window)', () => {
  const spec = aFunction().slo(50).maxScale(3).build(); // p99: 1 % of requests may be over 50 ms
  /** A histogram with `over` of `n` requests in the (150, 200] ms bucket, the rest in (15, 20]. */
  const buckets = (n: number, over: number) => LATENCY_BUCKETS_MS.map((b) => (b === 20 ? n - over : b === 200 ? over : 0));
  const run = (reps: ReturnType<typeof replica>[], seconds: Array<[number, number]>, window = 5) => {
    let st: SloGuardState = freshGuard();
    const fired: Array<Decision | undefined> = [];
    for (const [n, over] of seconds) {
      const g = sloGuard(st, spec, observe(n, reps, { latencyBuckets: buckets(n, over), latencyMs: lat(over / n > 0.01 ? 129 : 18) }), hold(reps.length),
        window, { now: 1000, seconds: 60 });
      st = g.next;
      fired.push(g.decision);
    }
    return { fired, st };
  };
  const s5 = (x: [number, number]) => [x, x, x, x, x];

  it('the Poisson tail it tests with', () => {
    expect(poissonTail(0.5, 0)).toBe(1);
    expect(poissonTail(0.5, 1)).toBeCloseTo(1 - Math.exp(-0.5), 12);
    expect(poissonTail(0.5, 5)).toBeCloseTo(1.7212e-4, 7);
    expect(poissonTail(300, 300)).toBeGreaterThan(0.45); // normal approximation: about one half at the mean
    expect(poissonTail(300, 360)).toBeLessThan(GUARD_ALPHA);
    expect(countOver(buckets(100, 7), 50)).toBeCloseTo(7, 9);
    expect(countOver(buckets(100, 7), 175)).toBeCloseTo(3.5, 9); // half of the (150, 200] bucket
  });

  it('a model off by 2.5x (issue 10: every request at 129 ms against 50 ms) raises the lowest quota after 5 s, and says why', () => {
    const { fired, st } = run([replica('a', 'g0', 1, 0.1), replica('b', 'g0', 1, 0.5)], s5([600, 600]));
    expect(fired.slice(0, 4).every((d) => d === undefined)).toBe(true);
    expect(fired[4]!.quotas).toEqual([{ replicaId: 'a', quota: 0.2 }]);
    expect(fired[4]!.reason).toMatch(/^SLO guard: 3000 of 3000 requests over 50 ms in 5 s \(p99 allows 30\.0; .*: quota a 0\.1→0\.2/);
    expect(st.holdUntilMs).toBe(61000);
    expect(st.window).toEqual([]); // the new capacity gets a full window
  });

  it('chance misses of a function that meets its p99 do not fire; a clear excess does', () => {
    // 10 req/s: 0.5 misses expected in 5 s; 2 is chance (P ≈ 0.09), 6 is not (P ≈ 1e-5)
    expect(run([replica('a', 'g0', 1, 1)], [[10, 1], [10, 0], [10, 1], [10, 0], [10, 0]]).fired.every((d) => d === undefined)).toBe(true);
    expect(run([replica('a', 'g0', 1, 1)], [[10, 2], [10, 1], [10, 1], [10, 1], [10, 1]]).fired[4]?.add).toHaveLength(1);
    // 1000 req/s at exactly the allowed 1 % never fires
    expect(run([replica('a', 'g0', 1, 1)], s5([1000, 10])).fired.every((d) => d === undefined)).toBe(true);
  });

  it('at full quota: +1 replica as large as the largest within max_scale; at max_scale: keeps what it has', () => {
    const full = run([replica('a', 'g0', 0.5, 1)], s5([100, 50])).fired;
    expect(full[4]!.add).toEqual([{ gpu: 'new:slo-guard', smShare: 0.5, quota: 1, batchSize: 1 }]);
    expect(full[4]!.replicas).toBe(2);
    const atMax = run([replica('a', 'g0', 1, 1), replica('b', 'g0', 1, 1), replica('c', 'g0', 1, 1)], s5([100, 50])).fired;
    expect(atMax[4]!.add).toHaveLength(0);
    expect(atMax[4]!.remove).toHaveLength(0);
    expect(atMax[4]!.reason).toMatch(/at max_scale 3/);
  });

  it('intervals without requests leave the window as it is; refusals count as misses', () => {
    let st: SloGuardState = { window: [[100, 50], [100, 50], [100, 50], [100, 50]] };
    st = sloGuard(st, spec, observe(0, [replica('a', 'g0', 1, 1)], { completions: 0 }), hold(1), 5).next;
    expect(st.window).toHaveLength(4);
    const g = sloGuard(st, spec, observe(0, [replica('a', 'g0', 1, 1)], { completions: 0, rejected: 40 }), hold(1), 5);
    expect(g.decision?.add).toHaveLength(1);
  });

  it('does not fire when the policy already adds capacity', () => {
    const reps = [replica('a', 'g0', 1, 0.5)];
    const up: Decision = { ...hold(1), quotas: [{ replicaId: 'a', quota: 0.7 }] };
    expect(addsCapacity(up, observe(1, reps))).toBe(true);
    const g = sloGuard({ window: [[600, 600], [600, 600], [600, 600], [600, 600]] }, spec,
      observe(600, reps, { latencyBuckets: buckets(600, 600), latencyMs: lat(129) }), up, 5);
    expect(g.decision).toBeUndefined();
    expect(g.next.window).toEqual([]);
  });

  it('the hold: until it ends, decisions that remove a replica or lower a quota are held; adding ones are not', () => {
    const reps = [replica('a', 'g0', 1, 0.5), replica('b', 'g0', 1, 1)];
    const st: SloGuardState = { window: [], holdUntilMs: 60000 };
    const down: Decision = { ...hold(2), quotas: [{ replicaId: 'a', quota: 0.3 }] };
    const fewer: Decision = { ...hold(1), remove: ['b'] };
    const up: Decision = { ...hold(2), quotas: [{ replicaId: 'a', quota: 0.7 }] };
    expect(reducesCapacity(down, observe(1, reps))).toBe(true);
    expect(guardHolds(st, down, observe(1, reps), 59999)).toBe(true);
    expect(guardHolds(st, fewer, observe(1, reps), 30000)).toBe(true);
    expect(guardHolds(st, up, observe(1, reps), 30000)).toBe(false);
    expect(guardHolds(st, fewer, observe(1, reps), 60000)).toBe(false);
  });
});
