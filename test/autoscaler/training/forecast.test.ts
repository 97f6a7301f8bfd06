import { admit, forecast, getPolicy } from '../../../autoscaler/training';
import type { TrainingJob } from '../../../autoscaler/training/types';
import { aJob, cluster, linear, state } from './fixtures';

const ef = () => getPolicy('elasticflow');
const with_ = (j: TrainingJob, extra: Partial<TrainingJob>): TrainingJob => ({ ...j, ...extra });

describe('forecast: what the live loop will do, not the guaranteed plan', () => {
  test('alone with a far deadline: runs now on every free slot and ends mid-round (the plan said near the deadline)', () => {
    const job = aJob('a').iterations(100).deadline(1000).curve(linear(4)).maxGpus(4).build();
    const st = state(cluster(1, 4), [job], 60);
    const d = admit(job, { ...st, jobs: [] }, 0);
    expect(d.admitted).toBe(true);
    // the guaranteed minimum share starts late: that is not what happens
    if (d.admitted) expect(d.plan.predictedCompletion).toBeGreaterThan(900);
    const f = forecast(ef(), st, 0);
    expect(f.completion.a).toBeCloseTo(25); // 100 it / 4 it/s, not rounded up to the 60 s slot
    expect(f.workersPerRound.a).toEqual([4, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
  });

  test.each([
    { name: 'launch and exit costs of a job not yet running', launch: 2, exit: 1, current: 0, want: 2 + 25 + 1 },
    { name: 'a job already running at that count pays only its exit', launch: 2, exit: 1, current: 4, want: 25 + 1 },
    { name: 'a running job rescaled pays stop + relaunch', launch: 2, exit: 1, current: 2, want: 1 + 2 + 25 + 1 },
  ])('$name', ({ launch, exit, current, want }) => {
    const job = with_(aJob('a').iterations(100).curve(linear(4)).maxGpus(4).build(), { launchSeconds: launch, exitSeconds: exit, currentGpus: current });
    expect(forecast(ef(), state(cluster(1, 4), [job], 60), 0).completion.a).toBeCloseTo(want);
  });

  test('a job that ends mid-round hands its slot over then (the service runs a round on completion)', () => {
    const a = with_(aJob('a').iterations(30).curve(linear(1)).maxGpus(1).submit(0).build(), { currentGpus: 1 });
    const b = with_(aJob('b').iterations(10).curve(linear(1)).maxGpus(1).submit(5).build(), { launchSeconds: 2 });
    const f = forecast(ef(), state(cluster(1, 1), [a, b], 60), 0);
    expect(f.completion.a).toBeCloseTo(30);
    expect(f.completion.b).toBeCloseTo(30 + 2 + 10); // not 60 + …
    expect(f.workersPerRound.b.slice(0, 2)).toEqual([0, 0]);
  });

  test('past maxRounds the allocation is assumed to stay', () => {
    const job = with_(aJob('a').iterations(1e6).curve(linear(1)).maxGpus(1).build(), { currentGpus: 1 });
    expect(forecast(ef(), state(cluster(1, 1), [job], 1), 0, { maxRounds: 5 }).completion.a).toBeCloseTo(1e6);
  });

  test('a job done already completes now; one that can never run has no completion', () => {
    const done = aJob('d').iterations(10).done(10).build();
    const never = aJob('n').iterations(10).curve({ gpus: [8], iterPerSec: [1] }).build(); // needs 8 of 4
    const f = forecast(ef(), state(cluster(1, 4), [done, never], 60), 7, { maxRounds: 20 });
    expect(f.completion.d).toBe(7);
    expect(f.completion.n).toBeUndefined();
  });

  test('admission leaves room for launch and exit: the earliest feasible deadline includes them', () => {
    const job = with_(aJob('a').iterations(100).deadline(10).curve(linear(4)).maxGpus(4).build(), { launchSeconds: 3, exitSeconds: 2 });
    const d = admit(job, state(cluster(1, 4), [], 60), 0);
    expect(d.admitted).toBe(false);
    if (!d.admitted) expect(d.earliestFeasibleDeadline).toBe(25 + 3 + 2);
    expect(admit({ ...job, deadline: 30 }, state(cluster(1, 4), [], 60), 0).admitted).toBe(true);
    expect(admit({ ...job, deadline: 29 }, state(cluster(1, 4), [], 60), 0).admitted).toBe(false);
  });
});
