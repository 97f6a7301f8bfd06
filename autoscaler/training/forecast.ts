/**
 * Predicted completions: what the live loop will do, played forward with no new arrivals. The
 * policy's allocation phase runs at `now`, then every slot on the grid `now + k·slot`, and again
 * whenever a job finishes (the live service runs a round when a job's process ends). A job whose
 * worker count changes makes no progress for its `launchSeconds` (process start, data load:
 * measured by the profile run); a job finishes when its work is done, mid-round, plus its
 * `exitSeconds`. Admission guarantees stay the policy's own plans: this is the forecast the jobs
 * API shows, not a promise.
 */
import { remainingIterations, throughputAt } from './curve';
import type { SchedulerState, Seconds, TrainingJob, TrainingPolicy } from './types';

export interface Forecast {
  /** jobId → predicted completion (s); absent if the job is not predicted to run within the horizon. */
  readonly completion: Readonly<Record<string, Seconds>>;
  /** jobId → workers held at `now + k·slot`, k = 0 … rounds−1 (0 after completion). */
  readonly workersPerRound: Readonly<Record<string, number[]>>;
}

export interface ForecastOptions {
  /** Rounds of `workersPerRound` to report (default 10). */
  readonly rounds?: number;
  /** Allocation rounds simulated before the allocation is assumed to stay as it is (default 2000). */
  readonly maxRounds?: number;
}

interface Sim {
  job: TrainingJob;
  done: number;
  gpus: number;
  /** No progress before this time (a (re)launch in progress). */
  busyUntil: Seconds;
  steps: Array<{ from: Seconds; gpus: number }>;
}

/**
 * Plays `policy`'s allocation forward from `now` over `state.jobs` (a fresh policy instance: a
 * stateful policy's memory must not be disturbed by a forecast). Pure.
 */
export function forecast(policy: TrainingPolicy, state: SchedulerState, now: Seconds, opts: ForecastOptions = {}): Forecast {
  const slot = state.slotSeconds;
  const maxRounds = opts.maxRounds ?? 2000;
  const completion: Record<string, Seconds> = {};
  const all: Sim[] = state.jobs.map((job) =>
    ({ job, done: job.doneIterations, gpus: job.currentGpus ?? 0, busyUntil: now, steps: [{ from: now, gpus: job.currentGpus ?? 0 }] }));
  let live = all.filter((s) => remainingIterations(s.job) > 0);
  for (const s of all) if (remainingIterations(s.job) <= 0) completion[s.job.id] = now;
  const rate = (s: Sim) => throughputAt(s.job.curve, s.gpus);
  const finishAt = (s: Sim, t: Seconds) => (rate(s) > 0 ? Math.max(t, s.busyUntil) + (s.job.iterations - s.done) / rate(s) : Infinity);
  let t = now;
  let k = 0; // grid index of the next round
  for (let r = 0; live.length > 0; r++) {
    // a round at t: every live job's worker count for the coming interval
    const d = policy.allocation.allocate({ ...state, jobs: live.map((s) => ({ ...s.job, doneIterations: s.done, currentGpus: s.gpus })) }, t);
    for (const s of live) {
      const g = d.gpus[s.job.id] ?? 0;
      if (g === s.gpus) continue;
      // stopping a running process checkpoints and exits; the new one starts from the checkpoint
      const stop = s.gpus > 0 ? s.job.exitSeconds ?? 0 : 0;
      s.gpus = g;
      s.busyUntil = g > 0 ? t + stop + (s.job.launchSeconds ?? 0) : Infinity;
      s.steps.push({ from: t, gpus: g });
    }
    while (now + k * slot <= t) k++;
    const nextRound = now + k * slot;
    if (r >= maxRounds) {
      // the allocation is assumed to stay as it is from here on
      for (const s of live) if (Number.isFinite(finishAt(s, t))) completion[s.job.id] = finishAt(s, t) + (s.job.exitSeconds ?? 0);
      break;
    }
    const first = Math.min(...live.map((s) => finishAt(s, t)));
    const tNext = Math.min(nextRound, first);
    for (const s of live) {
      const from = Math.max(t, s.busyUntil);
      if (rate(s) > 0 && tNext > from) s.done = Math.min(s.job.iterations, s.done + (tNext - from) * rate(s));
    }
    t = tNext;
    const ended = live.filter((s) => finishAt(s, t) <= t + 1e-9);
    for (const s of ended) {
      s.done = s.job.iterations;
      completion[s.job.id] = t + (s.job.exitSeconds ?? 0);
      s.steps.push({ from: t, gpus: 0 });
    }
    live = live.filter((s) => !ended.includes(s));
  }
  const rounds = opts.rounds ?? 10;
  const workersPerRound: Record<string, number[]> = {};
  for (const s of all) {
    workersPerRound[s.job.id] = Array.from({ length: rounds }, (_, i) => {
      const at = now + i * slot;
      let g = 0;
      for (const st of s.steps) if (st.from <= at) g = st.gpus;
      return g;
    });
  }
  return { completion, workersPerRound };
}
