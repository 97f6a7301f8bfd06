/**
 * The authors' Tiresias baseline (`--schedule=dlas-gpu`): `dlas_sim_jobs(gputime=True)` of
 * `pkusys/ElasticFlow` `scheduler/scheduler.py`, with `jobs.py` (`move_to_runnable`, the queues
 * `JOBS.queues` / `JOBS.queue_limit`), re-implemented step by step. What it does, quirks included:
 * - 2D-LAS with three queues; a running job moves down one queue when its attained GPU time
 *   `int(executed_time · num_gpu)` reaches the queue's limit (3250 s, then 7200 s; the third
 *   queue's 18000 s is never used, it is the last queue); at most one step per event;
 * - each round, queue by queue in list order, a job runs if its `num_gpu` still fits in the GPUs
 *   left (first fit: a job that does not fit is skipped, smaller ones behind it may run); running
 *   jobs that no longer fit are preempted; then each queue's pending jobs are moved to its end;
 * - progress is in seconds against the trace's `duration`, at the requested `num_gpu` only;
 * - a job that starts (pending → running) is charged `estimate_overhead` at its next update,
 *   but its end time does not include it, except on every `slot`-th round (`restart`) when every
 *   running job's end time includes the restart overhead;
 * - one end event (the earliest end, never closer than one slot), the next queue jump
 *   (`ceil((limit − executed_time) / num_gpu)`: time minus GPU time, as in the artifact), and the
 *   start events (merged within one slot); a job counts as accepted when its end event comes and
 *   its `end_time` (planned when the end event was made) is ≤ its deadline.
 * Placement (`elastic_placement`) does not change anything in simulation and is not modelled.
 */
import type { ClusterSpec } from '../../training/types';
import {
  type ArtifactBaselineJob,
  type ArtifactBaselineResult,
  durationOf,
  estimateOverhead,
  MAXSIZE,
  mergeStartEvents,
  resultOf,
  startEvents,
} from './baseline-loop-parts';

/** `JOBS.queue_limit` (GPU-seconds) and `JOBS.num_queue`. */
export const DLAS_QUEUE_LIMITS = [3250, 7200, 18000] as const;
export const DLAS_NUM_QUEUES = 3;

export interface DlasJob {
  readonly spec: ArtifactBaselineJob;
  readonly gpus: number;
  readonly duration: number;
  readonly ddl: number;
  status: 'PENDING' | 'RUNNING';
  lastCheck: number;
  totalExecuted: number;
  executed: number;
  overhead: number;
  qId: number;
  endTime: number;
}

export interface DlasTraceEntry {
  readonly time: number;
  readonly running: readonly string[];
  readonly queues: ReadonlyArray<readonly string[]>;
}

export interface DlasOptions {
  /** Called after each round with the running jobs and the queues (for tests). */
  readonly onRound?: (e: DlasTraceEntry) => void;
  /** Called when a job ends, with its judged end time (the artifact's job.csv `end_time`). */
  readonly onEnd?: (id: string, endTime: number) => void;
}

export function simulateArtifactTiresias(
  jobs: readonly ArtifactBaselineJob[],
  cluster: ClusterSpec,
  slot: number,
  opts: DlasOptions = {},
): ArtifactBaselineResult {
  const numGpu = cluster.nodes * cluster.gpusPerNode;
  const events = startEvents([...jobs].sort((a, b) => a.submitTime - b.submitTime));
  const queues: DlasJob[][] = Array.from({ length: DLAS_NUM_QUEUES }, () => []);
  let runnable: DlasJob[] = [];
  let endEvent: { time: number; endJobs: DlasJob[] } | undefined;
  let nextJobJump = MAXSIZE;
  let scheduleCount = 0;
  let accepted = 0;
  while (events.length + runnable.length > 0) {
    // "This cluster is not large enough to run the job": what is left never ends
    if (events.length === 0 && !endEvent) break;
    // decide which is the next event: start or end (a tie takes both), or the next queue jump
    const startTime = events.length ? events[0].time : MAXSIZE;
    const endTime = endEvent ? endEvent.time : MAXSIZE;
    let eventTime = Math.min(startTime, endTime);
    let ends: DlasJob[] = endTime <= startTime && endEvent ? endEvent.endJobs : [];
    let starts = startTime <= endTime && events.length ? events[0] : undefined;
    if (eventTime > nextJobJump) {
      eventTime = nextJobJump;
      ends = [];
      starts = undefined;
    }
    // ending jobs: judged on the end time planned with the end event
    for (const e of ends) {
      if (e.endTime <= e.ddl && e.spec.deadline !== undefined) accepted++;
      opts.onEnd?.(e.spec.id, e.endTime);
      runnable.splice(runnable.indexOf(e), 1);
      queues[e.qId].splice(queues[e.qId].indexOf(e), 1);
    }
    // new jobs: pending, in Q0 (`move_to_runnable`)
    if (starts) {
      for (const s of starts.startJobs) {
        const j: DlasJob = {
          spec: s,
          gpus: s.requestedGpus,
          duration: durationOf(s),
          ddl: s.deadline ?? MAXSIZE,
          status: 'PENDING',
          lastCheck: s.submitTime,
          totalExecuted: 0,
          executed: 0,
          overhead: 0,
          qId: 0,
          endTime: 0,
        };
        runnable.push(j);
        queues[0].push(j);
      }
      events.shift();
    }
    // executed time and demotion (pending jobs: only their check time moves; no starvation rule)
    for (const r of runnable) {
      if (r.status === 'RUNNING') {
        const tmp = Math.max(Math.trunc(eventTime - r.lastCheck) - r.overhead, 0);
        r.totalExecuted = Math.trunc(r.totalExecuted + tmp);
        r.executed = Math.trunc(r.executed + tmp);
        r.lastCheck = eventTime;
        r.overhead = 0;
        const gpuTime = Math.trunc(r.executed * r.gpus);
        if (r.qId < DLAS_NUM_QUEUES - 1 && gpuTime >= DLAS_QUEUE_LIMITS[r.qId]) {
          const from = r.qId;
          r.qId = from + 1;
          queues[r.qId].push(r);
          queues[from].splice(queues[from].indexOf(r), 1);
        }
      } else {
        r.lastCheck = eventTime;
      }
    }
    // schedule queue by queue, first fit
    let free = numGpu;
    const restart = scheduleCount > 0 && scheduleCount % slot === 0;
    scheduleCount++;
    const run: DlasJob[] = [];
    const preempt: DlasJob[] = [];
    for (const q of queues) {
      for (const j of q) {
        if (free >= j.gpus) {
          if (j.status === 'PENDING') {
            run.push(j);
            j.overhead = estimateOverhead(j.gpus, numGpu, restart);
          }
          free -= j.gpus;
        } else if (j.status === 'RUNNING') preempt.push(j);
      }
    }
    for (const j of preempt) j.status = 'PENDING';
    for (const j of run) j.status = 'RUNNING';
    // `runnable_jobs.sort(key=num_gpu, reverse=True)` (stable): fixes the order of the end jobs
    runnable = stableSortDesc(runnable, (j) => j.gpus);
    // each queue: pending jobs to its end
    for (let qi = 0; qi < queues.length; qi++) {
      const q = queues[qi];
      queues[qi] = [...q.filter((j) => j.status !== 'PENDING'), ...q.filter((j) => j.status === 'PENDING')];
    }
    // the one end event: earliest end, at least one slot away
    endEvent = undefined;
    let minEnd = MAXSIZE;
    for (const r of runnable) {
      if (r.status !== 'RUNNING') continue;
      let remaining = r.duration - r.totalExecuted;
      if (restart) {
        r.overhead = estimateOverhead(r.gpus, numGpu, true);
        remaining += r.overhead;
      }
      const end = Math.trunc(eventTime + remaining);
      const endEventTime = Math.max(eventTime + slot, end);
      if (endEventTime < minEnd) {
        endEvent = { time: endEventTime, endJobs: [r] };
        minEnd = endEventTime;
        r.endTime = end;
      } else if (endEventTime === minEnd) {
        r.endTime = end;
        endEvent!.endJobs.push(r);
      }
    }
    // the next queue jump (demotion); the artifact divides (limit − executed_time) by num_gpu
    nextJobJump = MAXSIZE;
    for (const r of runnable) {
      if (r.status !== 'RUNNING' || r.qId >= DLAS_NUM_QUEUES - 1) continue;
      const jump = Math.trunc(Math.ceil((DLAS_QUEUE_LIMITS[r.qId] - r.executed) / r.gpus) + eventTime);
      if (jump < nextJobJump) nextJobJump = jump;
    }
    opts.onRound?.({
      time: eventTime,
      running: runnable.filter((r) => r.status === 'RUNNING').map((r) => r.spec.id),
      queues: queues.map((q) => q.map((j) => j.spec.id)),
    });
    if (nextJobJump - eventTime < slot) nextJobJump = eventTime + slot;
    mergeStartEvents(events, eventTime, slot);
  }
  return resultOf(jobs, accepted);
}

function stableSortDesc<T>(xs: readonly T[], key: (x: T) => number): T[] {
  return xs
    .map((x, i) => [x, i] as const)
    .sort((a, b) => key(b[0]) - key(a[0]) || a[1] - b[1])
    .map(([x]) => x);
}
