/**
 * One pass of Algorithm 1 over the admitted jobs: sort by deadline, give each its minimum
 * satisfactory share on the forward board, reserve it. Jobs whose deadline can no longer be met
 * (e.g. after scaling overheads) are reported, not reserved: they continue as best-effort work.
 */
import { createFreeGpuTimeline, type FreeGpuTimeline } from '../free-gpu-timeline';
import { levelsOf, remainingIterations } from '../curve';
import type { Plan, SchedulerState, Seconds, TrainingJob } from '../types';
import { minSharePlan, reservePlan, type FillJob } from './filling';

/** Tunables of the ElasticFlow policy. */
export interface ElasticFlowOptions {
  /**
   * Seconds subtracted from every deadline when planning, to absorb scaling/restart overheads the
   * plan does not model (ElasticFlow's simulator charges 2–56 s per job per scheduling event).
   */
  readonly safetySeconds?: number;
}

export interface EdfPassResult {
  readonly board: FreeGpuTimeline;
  readonly plans: Map<string, Plan>;
  /** Deadline jobs whose deadline cannot be met any more, in EDF order. */
  readonly infeasible: string[];
  /** Set if the pass stopped because `stopOnFail` was hit by this job. */
  readonly failedAt?: string;
}

export function capacityOf(state: SchedulerState): number {
  return Math.max(0, state.cluster.nodes * state.cluster.gpusPerNode - (state.unavailableGpus ?? 0));
}

/**
 * Seconds a job's plan must leave before its deadline besides `safety`: its process launch (when
 * it is not running yet) and its exit after the last iteration.
 */
export function overheadOf(job: TrainingJob): Seconds {
  return ((job.currentGpus ?? 0) > 0 ? 0 : job.launchSeconds ?? 0) + (job.exitSeconds ?? 0);
}

export function toFillJob(job: TrainingJob, cap: number, safety: number, deadline = job.deadline): FillJob {
  return {
    id: job.id,
    need: remainingIterations(job),
    deadline: deadline === undefined ? Infinity : deadline - safety - overheadOf(job),
    levels: levelsOf(job, cap),
    curve: job.curve,
  };
}

/** EDF order: deadline, then submit time, then id (deterministic). */
export function byDeadline(a: TrainingJob, b: TrainingJob): number {
  return (a.deadline ?? Infinity) - (b.deadline ?? Infinity) || a.submitTime - b.submitTime || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

/**
 * Runs the pass over the deadline jobs in `jobs`. With `stopOn`, the pass stops (failedAt = id)
 * as soon as that job, or a job after it in EDF order, fails — the new job is to blame then.
 */
export function edfPass(
  jobs: readonly TrainingJob[],
  state: SchedulerState,
  now: Seconds,
  opts: ElasticFlowOptions = {},
  stopOn?: string,
): EdfPassResult {
  const cap = capacityOf(state);
  const board = createFreeGpuTimeline(now, cap);
  const plans = new Map<string, Plan>();
  const infeasible: string[] = [];
  const sorted = jobs.filter((j) => j.deadline !== undefined).sort(byDeadline);
  let seenStop = false;
  for (const job of sorted) {
    if (job.id === stopOn) seenStop = true;
    const plan = minSharePlan(board, toFillJob(job, cap, opts.safetySeconds ?? 0), state.slotSeconds);
    if (!plan) {
      if (seenStop) return { board, plans, infeasible, failedAt: job.id };
      infeasible.push(job.id);
      continue;
    }
    reservePlan(board, plan, state.roundOnCompletion);
    plans.set(job.id, plan);
  }
  return { board, plans, infeasible };
}
