import { allocate, type JobNeed } from '../../../autoscaler/multitenant/mlfaas/allocate';
import { mlfaasClusterController, DEFAULT_MLFAAS_PARAMS } from '../../../autoscaler/multitenant/mlfaas';
import type { ClusterView, JobView } from '../../../autoscaler/multitenant/types';
import { freshPlan, planReplicas } from '../../../autoscaler/multitenant/mlfaas/plan';

const P = DEFAULT_MLFAAS_PARAMS;

function need(rate: number, ready: number, held = ready, served = true): JobNeed {
  return { pMs: 180, targetMs: 576, ready, held, served, mean: rate, rate: (z: number) => rate * (1 + 0.1 * z) };
}

const used = (jobs: JobNeed[], quotas: number[]): number => jobs.reduce((s, j, i) => s + j.held * quotas[i], 0);

describe('mlfaas allocate: the cluster CPU re-divided as quotas every tick', () => {
  it('normal mode: every job covered at one forecast level, all of the capacity used, never more', () => {
    const jobs = [need(5, 3), need(15, 6), need(1, 2)];
    const a = allocate(P, jobs, 10);
    expect(a.overload).toBe(false);
    expect(used(jobs, a.quotas)).toBeLessThanOrEqual(10 + 1e-6);
    expect(used(jobs, a.quotas)).toBeGreaterThan(10 - 0.05);
    for (const q of a.quotas) expect(q).toBeLessThanOrEqual(1);
    expect(a.quotas[1] * 6).toBeGreaterThan(a.quotas[0] * 3);
    expect(a.acceptRates).toEqual([1, 1, 1]);
  });

  it('overload: serves the jobs it can serve fully (cheapest first) rather than all of them badly', () => {
    // Four jobs each needing ~3 CPU on a 6.5-CPU cluster: a proportional split (1.6 each) meets no target.
    const jobs = [need(10, 4), need(10, 4), need(10, 4), need(10, 4)];
    const a = allocate(P, jobs, 6.5);
    expect(a.overload).toBe(true);
    expect(a.served.filter((x) => x).length).toBe(2);
    expect(used(jobs, a.quotas)).toBeLessThanOrEqual(6.5 + 1e-6);
    jobs.forEach((j, i) => {
      if (a.served[i]) expect(a.acceptRates[i]).toBe(1);
      else expect(a.acceptRates[i]).toBeLessThan(1);
    });
    // The proportional split the knapsack avoids: 1.6 CPU carries 10 req/s · 0.18 s = 1.8 CPU of work at ρ > 1.
    expect((10 * 0.18) / (6.5 / 4)).toBeGreaterThan(1);
  });

  it('overload: a job served now keeps its place against an equally cheap one (stickiness)', () => {
    const jobs = [need(10, 4, 4, false), need(10, 4, 4, true), need(10, 4, 4, false)];
    const a = allocate(P, jobs, 3.3);
    expect(a.served).toEqual([false, true, false]);
  });

  it('overload, within a minute (lock): the jobs served keep their place even against a cheaper one', () => {
    const jobs = [need(4, 4, 4, false), need(10, 4, 4, true), need(10, 4, 4, false)];
    expect(allocate(P, jobs, 3.3).served).toEqual([true, false, false]);
    expect(allocate(P, jobs, 3.3, 'knapsack').served).toEqual([false, true, false]);
  });

  it('a cluster that can carry its mean load is shared, never a knapsack, however bursty the forecast band', () => {
    const burst = (rate: number): JobNeed => ({ ...need(rate, 4), rate: (z: number) => rate * (1 + z) });
    const jobs = [burst(5), burst(5), burst(5)];
    const a = allocate(P, jobs, 9);
    expect(a.overload).toBe(false);
    expect(a.acceptRates).toEqual([1, 1, 1]);
  });
});

function job(name: string, o: Partial<JobView> = {}): JobView {
  return {
    name,
    processingMs: 180,
    sloMs: 720,
    sloPercentile: 99,
    replicas: 3,
    readyReplicas: 3,
    quota: 1,
    minuteCounts: [],
    queueLength: 0,
    inFlight: 0,
    recentLatencyMs: { mean: NaN, pct: NaN, windowS: 30 },
    droppedLastTick: 0,
    ...o,
  };
}

describe('mlfaasClusterController', () => {
  const view = (nowS: number, jobs: JobView[]): ClusterView => ({ nowS, capacity: 12, jobs });

  it('is deterministic and never hands out more than the capacity', () => {
    const a = mlfaasClusterController({ capacity: 12 });
    const b = mlfaasClusterController({ capacity: 12 });
    const counts = [600, 900, 300, 1200, 700];
    for (let t = 1; t <= 5; t++) {
      const jobs = [job('x', { minuteCounts: counts.slice(0, t) }), job('y', { minuteCounts: counts.slice(0, t).map((c) => c / 2) })];
      const v = view(t * 60, jobs);
      const da = a.tick(v);
      expect(b.tick(v)).toEqual(da);
      if (da === null) continue;
      const total = da.jobs.reduce((s, d, i) => s + (d?.replicas ?? jobs[i].replicas) * (d?.quota ?? jobs[i].quota), 0);
      expect(total).toBeLessThanOrEqual(12 + 1e-6);
    }
  });

  it('SLO guard: a queue building up moves quota to that job within one tick', () => {
    const c = mlfaasClusterController({ capacity: 12, qPlan: 1 });
    const w = { replicas: 8, readyReplicas: 8 };
    const calm = [job('x', { minuteCounts: [600, 600], ...w }), job('y', { minuteCounts: [600, 600], ...w })];
    const d0 = c.tick(view(120, calm))!;
    const q0 = d0.jobs[0]?.quota ?? 1;
    const burst = [job('x', { minuteCounts: [600, 600], queueLength: 40, quota: q0, ...w }), job('y', { minuteCounts: [600, 600], quota: q0, ...w })];
    const d1 = c.tick(view(130, burst))!;
    const qx = d1.jobs[0]?.quota ?? q0;
    const qy = d1.jobs[1]?.quota ?? q0;
    expect(qx).toBeGreaterThan(qy);
    expect(d1.reason).toMatch(/queue 40/);
  });

  it('asks for no replica change while a job still has replicas starting', () => {
    const c = mlfaasClusterController({ capacity: 36 });
    const hot = [job('x', { minuteCounts: [1400, 1400], replicas: 2, readyReplicas: 1 })];
    const d = c.tick(view(120, hot));
    expect(d?.jobs[0]?.replicas).toBeUndefined();
    const ready = [job('x', { minuteCounts: [1400, 1400], replicas: 2, readyReplicas: 2 })];
    expect(c.tick(view(130, ready))?.jobs[0]?.replicas).toBeGreaterThan(2);
  });
});

describe('mlfaas replica plan', () => {
  const pp = { ...P, downHoldTicks: 3, podIdleS: 35 };

  it('removes a replica only after the plan stayed below for the hold, never below the need, and counts its idle pod', () => {
    const st = freshPlan();
    const x = { nowS: 0, replicas: 5, ready: 5, want: 3, wantMin: 4 };
    expect(planReplicas(pp, st, x).replicas).toBe(5);
    expect(planReplicas(pp, st, { ...x, nowS: 10 }).replicas).toBe(5);
    const third = planReplicas(pp, st, { ...x, nowS: 20 });
    expect(third).toEqual({ replicas: 4, pods: 5 });
    // at the need now: no further removal, however long
    for (let t = 30; t < 100; t += 10) expect(planReplicas(pp, st, { ...x, nowS: t, replicas: 4, ready: 4 }).replicas).toBe(4);
    // the idle pod is gone after podIdleS
    expect(planReplicas(pp, st, { ...x, nowS: 100, replicas: 4, ready: 4 }).pods).toBe(4);
  });

  it('adds at once, reusing an idle pod first', () => {
    const st = freshPlan();
    st.ghosts = [50];
    const r = planReplicas(pp, st, { nowS: 10, replicas: 3, ready: 3, want: 5, wantMin: 5 });
    expect(r).toEqual({ replicas: 5, pods: 5 });
  });
});
