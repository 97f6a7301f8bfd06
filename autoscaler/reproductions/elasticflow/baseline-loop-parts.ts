/**
 * Shared pieces of the ElasticFlow artifact's baseline loops (`pkusys/ElasticFlow`,
 * `scheduler/scheduler.py`: `gandiva_sim_jobs`, `dlas_sim_jobs`), re-implemented in
 * `gandiva.ts` and `dlas.ts`.
 *
 * Both loops measure progress in seconds against the trace's `duration` column (the run time at
 * the requested `num_gpu`), not in iterations through the throughput table, so a job needs its
 * trace duration. `buildSimJobs` drops that column; `withTraceDurations` puts it back. Without it
 * the duration is estimated as iterations / throughput at the requested GPUs, rounded (the trace
 * generators truncate or round it, so this may be off by one second).
 */
import { throughputAt } from '../../training/curve';
import type { SimJob } from '../../sim/training/engine';
import type { TraceJob } from '../../sim/training/data';

/** A simulator job, optionally with the trace's `duration` (s). */
export type ArtifactBaselineJob = SimJob & { readonly duration?: number };

export interface ArtifactBaselineResult {
  readonly accepted: number;
  readonly declined: number;
  readonly ratio: number;
}

/** Effectively Python's `sys.maxsize` (a best-effort job's `ddl`, "no event"). */
export const MAXSIZE = Number.MAX_SAFE_INTEGER;

/** The trace's duration of a job (s), as `jobs.py:add_job` reads it (`int(duration)`). */
export function durationOf(job: ArtifactBaselineJob): number {
  if (job.duration !== undefined && Number.isFinite(job.duration)) return Math.trunc(job.duration);
  const thr = throughputAt(job.curve, job.requestedGpus);
  return thr > 0 ? Math.round(job.iterations / thr) : MAXSIZE;
}

/** Jobs built by `buildSimJobs(trace, ...)` with each row's `duration` attached (same order, same ids). */
export function withTraceDurations(jobs: readonly SimJob[], trace: readonly TraceJob[]): ArtifactBaselineJob[] {
  const byId = new Map(trace.map((t) => [t.id, t.duration]));
  return jobs.map((j) => ({ ...j, duration: byId.get(j.id) }));
}

/**
 * `utils.estimate_overhead(num_gpu, restart)` (never the cache variant in these loops). The
 * artifact uses `math.log(n, 2)` = ln n / ln 2, mirrored here rather than `Math.log2`.
 */
export function estimateOverhead(gpus: number, totalGpus: number, restart: boolean): number {
  let o = totalGpus >= 256 ? 7 : 2;
  if (restart) {
    o += 27;
    if (totalGpus >= 256) o += 20;
  }
  return o + (Math.log(gpus) / Math.log(2) + 1) * 2;
}

/** One start event of `JOBS.job_events` (these loops never put end jobs in it). */
export interface StartEvent<J> {
  time: number;
  startJobs: J[];
}

/** `JOBS.prepare_job_start_events`: one event per distinct submit time, jobs in trace order. */
export function startEvents<J extends { submitTime: number }>(jobs: readonly J[]): Array<StartEvent<J>> {
  const byTime = new Map<number, StartEvent<J>>();
  for (const j of jobs) {
    const e = byTime.get(j.submitTime);
    if (e) e.startJobs.push(j);
    else byTime.set(j.submitTime, { time: j.submitTime, startJobs: [j] });
  }
  return [...byTime.values()].sort((a, b) => a.time - b.time);
}

/**
 * The artifact's event merging after each round (same loop in both functions): while the first
 * event is within one slot of `now` and it is not the last one, it is moved to `now + slot` and the
 * next one is folded into it if that is also within the slot.
 */
export function mergeStartEvents<J>(events: Array<StartEvent<J>>, now: number, slot: number): void {
  if (events.length === 0) return;
  let next = events[0].time;
  while (Math.trunc(next - now) <= slot && events.length > 1) {
    events[0].time = now + slot;
    if (events[1].time - now > slot) break;
    next = events[1].time;
    events[0].startJobs.push(...events[1].startJobs);
    events.splice(1, 1);
  }
}

export function resultOf(jobs: readonly SimJob[], accepted: number): ArtifactBaselineResult {
  const withDeadline = jobs.filter((j) => j.deadline !== undefined).length;
  return { accepted, declined: withDeadline - accepted, ratio: withDeadline ? accepted / withDeadline : 1 };
}
