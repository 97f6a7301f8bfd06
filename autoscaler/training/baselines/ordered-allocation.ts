/** The baselines' allocation in a given job order: gang scheduling (with or without backfill) and elastic greedy. */
import { fitLevel, levelsOf, remainingIterations } from '../curve';
import type { RoundDecision, SchedulerState, TrainingJob } from '../types';
import { capacityOf } from '../mlfaas/edf-pass';

export { capacityOf };

/** The worker count a non-elastic job runs at: its request, snapped down to a usable level (≥ the smallest). */
export function gangSize(job: TrainingJob, cap: number): number {
  const levels = levelsOf(job, cap);
  if (levels.length === 0) return 0;
  return Math.max(levels[0], fitLevel(levels, job.requestedGpus ?? levels[0]));
}

export function active(state: SchedulerState): TrainingJob[] {
  return state.jobs.filter((j) => remainingIterations(j) > 0);
}

/**
 * Gang-schedules jobs in `order`: each gets exactly its gang size or nothing. With `backfill`,
 * a job that does not fit is skipped and later ones may start; without, the queue stops there.
 */
export function gangInOrder(
  name: string,
  order: readonly TrainingJob[],
  state: SchedulerState,
  backfill: boolean,
  why: (job: TrainingJob, i: number) => string,
): RoundDecision {
  const cap = capacityOf(state);
  let free = cap;
  const gpus: Record<string, number> = {};
  const reasons: Record<string, string> = {};
  let blocked = false;
  order.forEach((job, i) => {
    const n = gangSize(job, cap);
    if (!blocked && n > 0 && n <= free) {
      gpus[job.id] = n;
      free -= n;
      reasons[job.id] = `${why(job, i)}: runs on ${n} GPUs`;
    } else {
      gpus[job.id] = 0;
      reasons[job.id] = `${why(job, i)}: waits (${n} GPUs wanted, ${free} free)`;
      if (!backfill) blocked = true;
    }
  });
  return { gpus, reasons, reason: `${name}: ${order.length - Object.values(gpus).filter((g) => g === 0).length}/${order.length} jobs run, ${free} GPUs idle` };
}

/** Elastic greedy in `order`: each job takes the largest usable level that fits the free GPUs. */
export function elasticInOrder(name: string, order: readonly TrainingJob[], state: SchedulerState): RoundDecision {
  const cap = capacityOf(state);
  let free = cap;
  const gpus: Record<string, number> = {};
  const reasons: Record<string, string> = {};
  for (const job of order) {
    const g = fitLevel(levelsOf(job, cap), free);
    gpus[job.id] = g;
    free -= g;
    reasons[job.id] = `${name} order: ${g} GPUs`;
  }
  return { gpus, reasons, reason: `${name}: ${cap - free}/${cap} GPUs in use` };
}
