import type { ClusterView, JobView } from '../../../autoscaler/multitenant/types';
import { ActionBook, FaroHybrid, ThresholdCounter, actionReplicas, type LongTermPolicy } from '../../../autoscaler/reproductions/faro/hybrid';
import { FairShare, ReactiveBaseline } from '../../../autoscaler/reproductions/faro/baselines';

function job(over: Partial<JobView & { scaling: boolean }> = {}): JobView {
  return {
    name: 'j', processingMs: 180, sloMs: 720, sloPercentile: 99, replicas: 1, readyReplicas: 1, quota: 1, minuteCounts: [],
    queueLength: 0, inFlight: 0, recentLatencyMs: { mean: 100, pct: 200, windowS: 30 }, droppedLastTick: 0, ...over,
  } as JobView;
}

const view = (nowS: number, jobs: JobView[], capacity = 4): ClusterView => ({ nowS, capacity, jobs });

describe('artifact controller bookkeeping', () => {
  test.each([
    { name: 'target', a: { job: 0, target: 5, trials: 1 }, cur: 2, want: 5 },
    { name: 'delta clamps at min 1', a: { job: 0, delta: -3, trials: 1 }, cur: 2, want: 1 },
    { name: 'oneshot factor ⌈x·L/slo⌉', a: { job: 0, factor: 1440 / 720, trials: 1 }, cur: 3, want: 6 },
    { name: 'factor 0 (no latency) → min', a: { job: 0, factor: 0, trials: 1 }, cur: 3, want: 1 },
  ])('actionReplicas: $name', ({ a, cur, want }) => {
    expect(actionReplicas(a, cur, 1, 100)).toBe(want);
  });

  test('threshold counter: up after 3 over, down after 60 under, a tick on the other side restarts', () => {
    const c = new ThresholdCounter(3, 60, false);
    expect([true, true, false, true, true].map((o) => c.observe(0, o))).toEqual([0, 0, 0, 0, 0]);
    expect(c.observe(0, true)).toBe(1);
    const fires = Array.from({ length: 60 }, () => c.observe(0, false));
    expect(fires.slice(0, 59).every((f) => f === 0)).toBe(true);
    expect(fires[59]).toBe(-1);
    const ai = new ThresholdCounter(3, Infinity, true);
    expect([true, false, true, false, true].map((o) => ai.observe(0, o))).toEqual([0, 0, 0, 0, 1]);
  });

  test('upscales are capped by the free units; the rest waits while it has trials; downscales go first', () => {
    const b = new ActionBook();
    const v = view(10, [job({ replicas: 1 }), job({ replicas: 2 })], 4);
    // free = 4 − 3 = 1: job 0 asks +3 (gets 1, 2 wait), job 1 gives one back first.
    const out = b.execute(v, [{ job: 0, target: 4, trials: 5 }, { job: 1, target: 1, trials: 5 }]);
    expect(out).toEqual([{ replicas: 3, acceptRate: undefined }, { replicas: 1, acceptRate: undefined }]);
    expect(b.free).toBe(0);
    const busy = view(20, [job({ replicas: 3, scaling: true } as Partial<JobView>), job()], 4);
    expect(b.execute(busy, [])).toEqual([null, null]);
  });
});

describe('hybrid schedule', () => {
  test('long-term at 60 s and at multiples of 300 s; short-term +1 after 3 ticks over the SLO, not while scaling', () => {
    const calls: number[] = [];
    const lt: LongTermPolicy = { name: 'lt', plan: (v) => (calls.push(v.nowS), v.jobs.map(() => null)) };
    const h = new FaroHybrid(lt);
    const slow = job({ recentLatencyMs: { mean: 900, pct: 1000, windowS: 30 } });
    const decisions = [];
    for (let t = 10; t <= 610; t += 10) decisions.push([t, h.tick(view(t, [slow, job()], 8))] as const);
    expect(calls).toEqual([60, 300, 600]);
    const ups = decisions.filter(([, d]) => d !== null).map(([t]) => t);
    // counts restart after each long-term run: 10-30 fire at 30, 70-90 fire at 90, …
    expect(ups.slice(0, 3)).toEqual([30, 90, 120]);
    const h2 = new FaroHybrid(lt);
    const scaling = job({ recentLatencyMs: { mean: 900, pct: 1000, windowS: 30 }, scaling: true } as Partial<JobView>);
    for (let t = 10; t <= 50; t += 10) expect(h2.tick(view(t, [scaling], 8))).toBeNull();
  });

  test('Oneshot scales to ⌈x·L/720⌉ after 3 ticks; FairShare holds ⌊R/J⌋', () => {
    const o = new ReactiveBaseline('oneshot');
    const v = view(10, [job({ replicas: 1, recentLatencyMs: { mean: 2000, pct: 3000, windowS: 30 } })], 8);
    expect(o.tick(v)).toBeNull();
    expect(o.tick(v)).toBeNull();
    expect(o.tick(v)?.jobs[0]).toEqual({ replicas: 3, acceptRate: undefined });
    const f = new FairShare(36, 10);
    expect(f.share).toBe(3);
    expect(f.tick(view(10, [job({ replicas: 3 })], 36))).toBeNull();
  });
});
