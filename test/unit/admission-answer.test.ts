import { admit, forecast, getPolicy } from '../../autoscaler/training';
import type { TrainingJob } from '../../autoscaler/training/types';
import { inNodeWords, rejectionBody, slotNounOf } from '../../gateway/jobs/admission-answer';
import { aJob, cluster, linear, state } from '../autoscaler/training/fixtures';

const NOW = 1_750_000_000; // s, a realistic epoch so a raw timestamp in a message would show
const at = (s: number) => NOW + s;
const local = slotNounOf({ provider: 'mlfaas-local', orchestration: 'local', version: { release: '', sha: '' } });

/** The 409 body for `job` on a 4-slot node holding `admitted`. */
function answer(job: TrainingJob, admitted: TrainingJob[], noun = local) {
  const st = { ...state(cluster(1, 4), admitted, 60), roundOnCompletion: true };
  const d = admit(job, st, NOW);
  if (d.admitted) throw new Error('admitted');
  const alone = forecast(getPolicy('elasticflow'), { ...st, jobs: [job] }, NOW).completion[job.id];
  return rejectionBody(d, { job, admitted, now: NOW, capacity: 4, noun, alone }) as {
    error: { code: string; message: string; field: string };
    earliestFeasibleDeadline: string | null;
    earliestFeasibleDeadlineSeconds: number | null;
  };
}

// A holds all 4 slots for 10 s (40 iterations at 4 it/s) and must finish by +10 s.
const holder = { ...aJob('A').iterations(40).deadline(at(10)).submit(NOW).curve(linear(4)).maxGpus(4).build(), currentGpus: 4 };
const small = (deadline: number) => aJob('N').iterations(8).deadline(at(deadline)).submit(NOW).curve(linear(4)).maxGpus(4).build();

describe('409: why precisely, in RFC3339 and seconds from now, in the node’s own words', () => {
  test.each([
    {
      name: 'alone on an empty node, the deadline is too soon',
      job: aJob('N').iterations(100).deadline(at(10)).submit(NOW).curve(linear(4)).maxGpus(4).build(),
      admitted: [],
      message: /too soon: even alone with all 4 worker slots the job needs 25 s/,
      earliest: 25,
    },
    {
      name: 'with max_workers 2 it says so',
      job: aJob('N').iterations(100).deadline(at(10)).submit(NOW).curve(linear(4)).maxGpus(2).build(),
      admitted: [],
      message: /even alone with 2 worker slots \(its max_workers\) of 4 the job needs 50 s/,
      earliest: 50,
    },
    {
      name: 'feasible alone, but the slots are reserved for an admitted job with an earlier deadline',
      job: small(11),
      admitted: [holder],
      // eslint-disable-next-line @stylistic/max-len -- the 409 message, matched whole
      message: /alone the job needs 2 s, but the 4 worker slots are reserved for 1 admitted job\(s\) with earlier deadlines: A \(deadline 2025-\S+ \(10 s from now\), holding 4 worker slots\)/,
      earliest: 12,
    },
    {
      name: 'admitting it would break an admitted job',
      job: small(5),
      admitted: [holder],
      message: /feasible alone \(2 s\), but admitting the job would make admitted job A \(deadline \S+ \(10 s from now\)\) miss its deadline/,
      earliest: 12,
    },
  ])('$name', ({ job, admitted, message, earliest }) => {
    const b = answer(job, admitted);
    expect(b.error).toEqual(expect.objectContaining({ code: 'deadline_infeasible', field: 'deadline' }));
    expect(b.error.message).toMatch(message);
    expect(b.error.message).toMatch(new RegExp(`earliest deadline that can be guaranteed now is \\S+Z \\(${earliest} s from now\\)`));
    expect(b.error.message).not.toMatch(/\b1[67]\d{8}\b/); // no raw Unix timestamps
    expect(b.error.message).not.toMatch(/GPU/);
    expect(b.earliestFeasibleDeadlineSeconds).toBe(earliest);
    expect(b.earliestFeasibleDeadline).toBe(new Date(at(earliest) * 1000).toISOString());
    if (admitted.length === 0) expect(b.error.message).not.toMatch(/admitted job/);
  });

  test('the word comes from the provider: an orchestrator of accelerators says GPUs', () => {
    const gpu = slotNounOf({ provider: 'faas-netes', orchestration: 'kubernetes', version: { release: '', sha: '' } });
    const b = answer(aJob('N').iterations(100).deadline(at(10)).submit(NOW).curve(linear(4)).maxGpus(4).build(), [], gpu);
    expect(b.error.message).toMatch(/all 4 GPUs/);
  });
});

describe('policy reasons in the node’s words', () => {
  test.each([
    { reason: 'best-effort: 1 GPUs from the left-over', want: 'best-effort: 1 worker slot from the left-over' },
    { reason: 'minimum satisfactory share 2 GPUs (plan finishes 30 s from now), +2 by marginal return',
      want: 'minimum satisfactory share 2 worker slots (plan finishes 30 s from now), +2 by marginal return' },
    { reason: 'elasticflow: 1 guaranteed jobs use 0 GPUs as minimum shares', want: 'elasticflow: 1 guaranteed jobs use 0 worker slots as minimum shares' },
    { reason: 'fifo: waits (4 GPUs wanted, 1 free); no GPU free', want: 'fifo: waits (4 worker slots wanted, 1 free); no worker slot free' },
  ])('$reason', ({ reason, want }) => expect(inNodeWords(reason, local)).toBe(want));
});
