import { createFreeGpuTimeline, take } from '../../../autoscaler/training/free-gpu-timeline';
import { admitMlfaas, earliestFeasibleDeadline } from '../../../autoscaler/training/mlfaas/admission';
import { allocateMlfaas } from '../../../autoscaler/training/mlfaas/allocation';
import { minSharePlan } from '../../../autoscaler/training/mlfaas/filling';
import { gpusAt, roundsOf } from '../../../autoscaler/training/plan';
import { aJob, cluster, linear, state } from './fixtures';

// ElasticFlow §4.1, Fig. 4: 4 GPUs, jobs A and B hold 3 GPUs in the first slot. Job C has
// D_c = 2 slots and M_c = 3 iterations with T_c(1) = 1, T_c(2) = 1.5, T_c(4) = 2 (the values the
// text implies). With j = 2 it gets 1 + 2 GPUs → 2.5 < 3; with j = 4 it gets 1 then 4 → 3 ≥ 3.
describe('ElasticFlow Fig. 4 (minimum satisfactory share)', () => {
  const curveC = { gpus: [1, 2, 4], iterPerSec: [1, 1.5, 2] };
  test('job C needs 4 GPUs in slot 2 after 1 GPU in slot 1', () => {
    const b = createFreeGpuTimeline(0, 4);
    take(b, 0, 1, 3); // jobs A and B
    const plan = minSharePlan(b, { id: 'C', need: 3, deadline: 2, levels: [1, 2, 4], curve: curveC }, 1);
    expect(plan).not.toBeNull();
    expect(roundsOf(plan!, 2)).toEqual([1, 4]);
    expect(plan!.predictedCompletion).toBeCloseTo(2);
  });
  test('with a share of 2 the job would do 2.5 iterations and miss', () => {
    const b = createFreeGpuTimeline(0, 4);
    take(b, 0, 1, 3);
    const plan = minSharePlan(b, { id: 'C', need: 3, deadline: 2, levels: [1, 2], curve: curveC }, 1);
    expect(plan).toBeNull();
  });
});

describe('admission (Algorithm 1) with counter-offer', () => {
  const c = cluster(1, 4);
  const holder = aJob('A').iterations(40).deadline(10).curve(linear(4)).build(); // needs 4 GPUs × 10 s

  test.each([
    { name: 'empty cluster admits', jobs: [], job: aJob('N').iterations(8).deadline(4).build(), admitted: true },
    { name: 'full reservation rejects', jobs: [holder], job: aJob('N').iterations(8).deadline(4).build(), admitted: false },
    { name: 'fits after the holder', jobs: [holder], job: aJob('N').iterations(8).deadline(12).build(), admitted: true },
  ])('$name', ({ jobs, job, admitted }) => {
    const d = admitMlfaas(job, state(c, jobs), 0);
    expect(d.admitted).toBe(admitted);
  });

  test('rejection carries the earliest deadline that can be guaranteed, and that deadline is admitted', () => {
    const job = aJob('N').iterations(8).deadline(4).build();
    const d = admitMlfaas(job, state(c, [holder]), 0);
    expect(d.admitted).toBe(false);
    if (d.admitted) return;
    // The holder needs all 4 GPUs until 10; N then needs 8 iterations on 4 GPUs = 2 s → 12.
    expect(d.earliestFeasibleDeadline).toBe(12);
    expect(admitMlfaas({ ...job, deadline: 12 }, state(c, [holder]), 0).admitted).toBe(true);
    expect(admitMlfaas({ ...job, deadline: 11 }, state(c, [holder]), 0).admitted).toBe(false);
  });

  test('a new job that would break an admitted one is rejected and names it', () => {
    const a = aJob('A').iterations(20).deadline(10).curve(linear(4)).build(); // needs 2 GPUs for 10 s
    const n = aJob('N').iterations(30).deadline(8).curve(linear(4)).build(); // needs 4 GPUs for 7.5 s
    const d = admitMlfaas(n, state(c, [a]), 0);
    expect(d.admitted).toBe(false);
    expect(d.reason).toMatch(/A/);
  });

  test('best-effort jobs are admitted with a forecast plan', () => {
    const d = admitMlfaas(aJob('B').iterations(8).build(), state(c, [holder]), 0);
    expect(d.admitted).toBe(true);
    if (d.admitted) expect(d.plan.predictedCompletion).toBeCloseTo(12);
  });

  test('admission is pure: the state is not changed (dry run)', () => {
    const s = state(c, [holder]);
    const before = JSON.stringify(s);
    admitMlfaas(aJob('N').iterations(8).deadline(4).build(), s, 0);
    earliestFeasibleDeadline(aJob('N').iterations(8).deadline(4).build(), s, 0);
    expect(JSON.stringify(s)).toBe(before);
  });

  test('a job with no usable worker count gets no counter-offer', () => {
    const big = aJob('X').curve({ gpus: [8], iterPerSec: [8] }).deadline(100).build();
    const d = admitMlfaas(big, state(c, []), 0);
    expect(d).toMatchObject({ admitted: false, earliestFeasibleDeadline: null });
  });
});

describe('allocation (Algorithm 2)', () => {
  test('minimum shares first, spare GPUs by marginal return to the better-scaling job', () => {
    const c = cluster(1, 6);
    const good = aJob('good').iterations(1000).deadline(1000).curve(linear(8)).build();
    const poor = aJob('poor').iterations(1000).deadline(1000).curve({ gpus: [1, 2, 4, 8], iterPerSec: [1, 1.1, 1.15, 1.2] }).build();
    const d = allocateMlfaas(state(c, [good, poor]), 0);
    expect((d.gpus.good ?? 0) + (d.gpus.poor ?? 0)).toBe(6);
    expect(d.gpus).toMatchObject({ good: 4, poor: 2 });
    expect(d.reason).toMatch(/mlfaas/);
  });

  test('a tight deadline job keeps its minimum share even if it scales worse', () => {
    const c = cluster(1, 4);
    const tight = aJob('tight').iterations(8).deadline(4).curve(linear(4)).build(); // 2 GPUs × 4 s
    const be = aJob('be').iterations(1e6).curve(linear(4, 10)).build();
    const d = allocateMlfaas(state(c, [tight, be]), 0);
    expect(d.gpus.tight).toBeGreaterThanOrEqual(2);
    expect(d.gpus.tight + (d.gpus.be ?? 0)).toBe(4);
  });

  test('plans are exposed per job and consistent with the allocation', () => {
    const c = cluster(1, 4);
    const j = aJob('j').iterations(8).deadline(4).curve(linear(4)).build();
    const d = allocateMlfaas(state(c, [j]), 0);
    expect(gpusAt(d.plans!.j, 0)).toBeLessThanOrEqual(d.gpus.j);
  });
});
