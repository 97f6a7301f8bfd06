/**
 * The `elasticflow` policy as the authors' artifact computes it: the planner's arithmetic
 * (Python's slot alignment, merged boards, period-boundary shares, the infeasible fall-through),
 * the whole-event admission and its two quirks, and the `mlfaas` policy that drops them.
 */
import { alignToSlot, allocationTime, mergeMap, planJob, type ArtifactJob } from '../../../autoscaler/reproductions/elasticflow/plan';
import { artifactRound, estimateAll } from '../../../autoscaler/reproductions/elasticflow/round';
import { admitEventArtifact } from '../../../autoscaler/reproductions/elasticflow/policy';
import { getPolicy } from '../../../autoscaler/training/registry';
import { aJob, cluster, linear, state } from '../training/fixtures';

const job = (iterLeft: number, ddl: number, maxGpu = 8): ArtifactJob => ({
  iterLeft,
  ddl,
  levels: [1, 2, 4, 8].filter((l) => l <= maxGpu),
  maxGpu,
  thr: (g) => g, // linear: g iterations/s
});

describe('artifact planner arithmetic', () => {
  test.each([
    [0, 61, 60, 120],
    [0, 60, 60, 60],
    [100, 70, 60, 100], // deadline passed by less than a slot: aligned to the start (Python floor)
    [100, 10, 60, 40], // by more: the grid extends backwards
  ])('alignToSlot(%d, %d, %d) = %d', (start, t, slot, want) => expect(alignToSlot(start, t, slot)).toBe(want));

  test('mergeMap drops a key whose value repeats the previous one', () => {
    expect([...mergeMap(new Map([[0, 8], [10, 8], [20, 4], [30, 4], [40, 8]]))]).toEqual([[0, 8], [20, 4], [40, 8]]);
  });

  test('allocationTime is GPU-seconds until the end', () => {
    expect(allocationTime(new Map([[0, 2], [10, 4]]), 15)).toBe(2 * 10 + 4 * 5);
  });

  test('on an empty board the share is the fewest GPUs that meet the deadline, from now on', () => {
    // 600 iterations by t=200 at g it/s: 4 GPUs (150 s) is the first level that fits
    const p = planJob(job(600, 200), 0, new Map([[0, 8]]), 60, 8);
    expect(p.ok).toBe(true);
    expect([...p.allocations]).toEqual([[0, 4]]);
    expect(p.realEnd).toBe(150);
    expect(p.end).toBe(180); // held until the slot grid
    expect([...p.board]).toEqual([[0, 4], [180, 8]]);
  });

  test('the share switches at a period boundary of the board, not inside a period', () => {
    // 4 GPUs free until 120, all 8 after; 1000 iterations by 240.
    // Level 4: walking back from the deadline, [120, 240) gives 480 < 1000, then [0, 120) gives 480 more = 960 < 1000.
    // Level 8: [120, 240) gives 960, then [0,120) at min(8, 4 free) = 4 → 1440 ≥ 1000 at period start 0.
    const p = planJob(job(1000, 240), 0, new Map([[0, 4], [120, 8]]), 60, 8);
    expect(p.ok).toBe(true);
    expect([...p.allocations]).toEqual([[0, 4], [120, 8]]);
    expect(p.realEnd).toBe(120 + Math.ceil((1000 - 480) / 8));
  });

  test('an infeasible job still reserves GPUs: the top level tried up to its deadline, then what fits', () => {
    const p = planJob(job(10_000, 100), 0, new Map([[0, 8]]), 60, 8);
    expect(p.ok).toBe(false);
    expect(p.allocations.get(0)).toBe(8);
    // the period before the aligned deadline counts only up to the deadline (100 of 120 s), as the artifact
    expect(p.realEnd).toBe(120 + Math.ceil((10_000 - 8 * 100) / 8));
    expect(p.board.get(0)).toBe(0);
  });
});

describe('whole-event admission (ef_sim_jobs_access_control)', () => {
  const c = cluster(1, 8);
  const ok = (id: string) => aJob(id).iterations(80).deadline(60).curve(linear(8)).build(); // 2 GPUs for 40 s
  const impossible = aJob('X').iterations(10_000).deadline(60).curve(linear(8)).build();

  test('every arrival of the event is declined when one of them cannot meet its deadline', () => {
    const ds = admitEventArtifact([ok('A'), impossible, ok('B')], state(c, [], 60), 0);
    expect(ds.map((d) => d.admitted)).toEqual([false, false, false]);
    expect(ds[0].admitted ? '' : ds[0].reason).toMatch(/X/);
  });

  test('the same arrivals are admitted without the impossible one', () => {
    expect(admitEventArtifact([ok('A'), ok('B')], state(c, [], 60), 0).every((d) => d.admitted)).toBe(true);
  });

  test('while an admitted job is late, every arrival is declined, and it names that job', () => {
    const late = aJob('L').iterations(10_000).deadline(60).curve(linear(8)).build();
    const ds = admitEventArtifact([ok('A')], state(c, [late], 60), 0);
    expect(ds[0].admitted).toBe(false);
    if (!ds[0].admitted) expect(ds[0].wouldBreak).toBe('L');
    // ours (mlfaas) admits it: the late job blocks nothing
    expect(getPolicy('mlfaas').admission!.admit(ok('A'), state(c, [late], 60), 0).admitted).toBe(true);
  });

  test('estimateAll reports the late jobs in deadline order', () => {
    const late = aJob('L').iterations(10_000).deadline(60).curve(linear(8)).build();
    const r = estimateAll([ok('A'), late], 0, 60, 8);
    expect(r.ok).toBe(false);
    expect(r.late).toEqual(['L']);
  });
});

describe('allocate_free_gpus (marginal GPU time)', () => {
  test('left-over GPUs go to a job holding none first, then one level at a time; never more than the cluster', () => {
    const a = aJob('A').iterations(60).deadline(600).curve(linear(8)).build(); // 1 GPU suffices
    const b = aJob('B').iterations(60).deadline(600).curve(linear(8)).build();
    const r = artifactRound([a, b], 0, 60, 8);
    const total = [...r.gpus.values()].reduce((x, y) => x + y, 0);
    expect(total).toBeLessThanOrEqual(8);
    expect(r.gpus.get('A')).toBeGreaterThan(0);
    expect(r.gpus.get('B')).toBeGreaterThan(0);
    expect(total).toBe(8); // linear jobs: every spare level is taken
  });

  test('the policy registry has both: elasticflow (artifact) and mlfaas (ours)', () => {
    expect(getPolicy('elasticflow').admission?.admitEvent).toBeDefined();
    expect(getPolicy('mlfaas').admission?.admitEvent).toBeUndefined();
    expect(getPolicy('elasticflow').adaptsBatch).toBe(false);
    expect(getPolicy('mlfaas').adaptsBatch).toBe(true);
  });
});
