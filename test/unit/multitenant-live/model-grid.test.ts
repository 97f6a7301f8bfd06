import { bestUtility, dropPenalty, mdcLatencyMs, sloUtility, splitCores } from '../../../autoscaler/multitenant/live/queue-model';
import { describeMoves, gridClusterController, gridPlan } from '../../../autoscaler/multitenant/live/grid';
import type { JobView } from '../../../autoscaler/multitenant/types';

const job = (name: string, rps: number, quota = 1, replicas = 1, sloMs = 500): JobView => ({
  name, processingMs: 100, sloMs, sloPercentile: 99, replicas, readyReplicas: replicas, quota, minuteCounts: [], queueLength: 0, inFlight: 0,
  recentLatencyMs: { mean: NaN, pct: NaN, windowS: 5 }, droppedLastTick: 0, arrivalRps: rps,
});

describe('queue model (M/D/c as half of M/M/c at the percentile)', () => {
  it('gives the shared spec\'s fixtures: p = 150 ms, λ = 40/s', () => {
    // /work/shared/multitenant-spec.md: p99.99 N=7 → 804.2, N=8 → 456.8; p99 N=7 → 458.8, N=8 → 284.1 ms
    expect(mdcLatencyMs(40, 150, 7, 99.99)).toBeCloseTo(804.2, 0);
    expect(mdcLatencyMs(40, 150, 8, 99.99)).toBeCloseTo(456.8, 0);
    expect(mdcLatencyMs(40, 150, 7, 99)).toBeCloseTo(458.8, 0);
    expect(mdcLatencyMs(40, 150, 8, 99)).toBeCloseTo(284.1, 0);
    // a live queue at ρ ≥ 1 grows without bound
    expect(mdcLatencyMs(40, 150, 6, 99)).toBe(Infinity);
    expect(mdcLatencyMs(0, 150, 1, 99)).toBe(150);
  });

  it('utility, penalty and the split of cores into replicas', () => {
    expect(sloUtility(1440, 720)).toBe(0.5);
    expect(sloUtility(Infinity, 720)).toBe(0);
    expect(dropPenalty(0.0005)).toBe(0);
    expect(dropPenalty(0.03)).toBeCloseTo(0.25);
    expect(dropPenalty(0.08)).toBeCloseTo(0.5);
    expect(dropPenalty(1)).toBe(1);
    expect(splitCores(1.4)).toEqual({ replicas: 2, quota: 0.7 });
    expect(splitCores(0.3)).toEqual({ replicas: 1, quota: 0.3 });
  });

  it('drops requests only when no allocation carries them', () => {
    const j = { processingMs: 100, sloMs: 500, sloPercentile: 99, lambda: 12 };
    expect(bestUtility(j, 2).acceptRate).toBe(1);
    const starved = bestUtility(j, 0.4);
    expect(starved.acceptRate).toBeLessThan(1);
    // admitted load stays below what 0.4 core serves (4 req/s)
    expect(starved.acceptRate * 12).toBeLessThan(4);
  });
});

describe('grid controller', () => {
  it('plans the utility optimum: a job needing many steps is not starved by one-step gains', () => {
    const jobs = [{ processingMs: 100, sloMs: 500, sloPercentile: 99, lambda: 8 }, { processingMs: 100, sloMs: 500, sloPercentile: 99, lambda: 1 }];
    const plan = gridPlan(jobs, 2, 0.1, 0.05);
    expect(plan[0].cores).toBeGreaterThan(plan[1].cores);
    expect(plan[0].utility).toBe(1);
    expect(plan[1].utility).toBe(1);
    expect(plan[0].cores + plan[1].cores).toBeLessThanOrEqual(2 + 1e-9);
  });

  it('moves cores from an idle job to a loaded one and names the trade-off', () => {
    const c = gridClusterController();
    // 2 cores: hot and warm at 1 core each is fine, then hot's load doubles while warm's stops
    const first = c.tick({ nowS: 0, capacity: 2, jobs: [job('hot', 4), job('warm', 4)] });
    expect(first).toBeNull(); // the current allocation is already at utility 2
    const d = c.tick({ nowS: 1, capacity: 2, jobs: [job('hot', 14), job('warm', 0)] })!;
    expect(d).not.toBeNull();
    const hot = d.jobs[0]!;
    const warm = d.jobs[1]!;
    expect(hot.replicas! * hot.quota!).toBeGreaterThan(1);
    expect(warm.replicas! * warm.quota!).toBeLessThan(1);
    expect(d.reason).toMatch(/^gave \d\.\d core of warm to hot \(\+\d\.\d\): utility \d\.\d\d → \d\.\d\d/);
    // a change is made only when the utility rises
    const [before, after] = d.reason.match(/utility (\S+) → (\S+)/)!.slice(1).map(Number);
    expect(after).toBeGreaterThan(before);
  });

  it('forces a change when the current allocation exceeds the capacity, and drops the excess of an overloaded cluster', () => {
    const c = gridClusterController();
    const d = c.tick({ nowS: 0, capacity: 2, jobs: [job('a', 12), job('b', 8), job('c', 6)] })!;
    expect(d.reason).toMatch(/exceeds 2\.00/);
    const cores = d.jobs.map((a) => a!.replicas! * a!.quota!);
    expect(cores.reduce((s, x) => s + x, 0)).toBeLessThanOrEqual(2 + 1e-9);
    // 2.6 cores of demand on 2: someone admits less than everything
    expect(d.jobs.some((a) => a!.acceptRate! < 1)).toBe(true);
    expect(d.reason).toMatch(/admits \d+% \(offered/);
  });

  it('describes moves', () => {
    expect(describeMoves(['x', 'y'], [1, 1], [0.6, 1.4])).toBe('gave 0.4 core of x to y (+0.4)');
    expect(describeMoves(['x', 'y'], [1, 1], [0.6, 1])).toBe('took back 0.4 core of x (left free)');
  });
});
