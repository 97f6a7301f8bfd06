/**
 * Greedy allocation of spare GPUs by marginal return, one power-of-two step at a time (the loop of
 * ElasticFlow's Algorithm 2; Optimus and Pollux use it with their own gain functions).
 */
import { levelsOf, nextLevel } from './curve';
import { Heap } from '../heap';
import type { TrainingJob } from './types';

/** Gain per added GPU of moving `job` from `from` to `to` workers; ≤ 0 means "not worth it". */
export type GainFn = (job: TrainingJob, from: number, to: number) => number;

/**
 * Adds GPUs to `base` (mutated and returned) while `spare` lasts, always to the job whose next
 * step has the highest gain. `tie` orders equal gains (lower first).
 */
export function greedyFill(
  jobs: readonly TrainingJob[],
  base: Record<string, number>,
  spare: number,
  cap: number,
  gain: GainFn,
  tie: (job: TrainingJob) => number = (j) => j.submitTime,
): Record<string, number> {
  // largest gain first; equal gains by `tie` ascending
  const heap = new Heap<{ job: TrainingJob; levels: number[]; key: number; tie: number }>((a, b) => a.key > b.key || (a.key === b.key && a.tie < b.tie));
  const offer = (job: TrainingJob, levels: number[]) => {
    const x = base[job.id] ?? 0;
    const nx = nextLevel(levels, x);
    if (nx === x || nx - x > spare) return;
    const g = gain(job, x, nx);
    if (g > 0) heap.push({ job, levels, key: g, tie: tie(job) });
  };
  for (const job of jobs) offer(job, levelsOf(job, cap));
  while (spare > 0 && heap.size > 0) {
    const { job, levels } = heap.pop()!;
    const x = base[job.id] ?? 0;
    const nx = nextLevel(levels, x);
    if (nx - x > spare) continue;
    base[job.id] = nx;
    spare -= nx - x;
    offer(job, levels);
  }
  return base;
}
