import type { ClusterSpec, SchedulerState, Seconds, TrainingJob } from '../ports/training-scheduler';

/**
 * Lifecycle: admitted → running ⇄ waiting (0 workers this round) → completed | cancelled | failed.
 * `resuming`: no process runs it because the training service stopped (or the process holding it
 * died); workers 0 until a scheduler picks it up again and relaunches it from its checkpoint.
 */
export type JobState = 'admitted' | 'running' | 'waiting' | 'resuming' | 'completed' | 'cancelled' | 'failed';

export const TERMINAL: ReadonlySet<JobState> = new Set(['completed', 'cancelled', 'failed']);

/** What the runtime last reported (its `progress` line). */
export interface JobProgress {
  epoch: number;
  epochs: number;
  step: number;
  samples: number;
  loss?: number;
  accuracy?: number;
  examplesPerSec?: number;
  gradNoiseScale?: number | null;
  statEfficiency?: number | null;
}

/** One allocation change with the scheduler's reason. */
export interface Allocation {
  /** RFC3339 */
  time: string;
  workers: number;
  reason: string;
}

/** A training job as stored in Redis and answered by `GET /system/jobs/{id}`. */
export interface JobRecord {
  id: string;
  function: string;
  namespace: string;
  model: string;
  dataset?: string;
  epochs: number;
  /** Total optimizer steps at `batchSize`. */
  iterations: number;
  batchSize: number;
  learningRate: number;
  maxWorkers: number;
  /** RFC3339 */
  submittedAt: string;
  deadline?: string;
  softDeadline?: string;
  state: JobState;
  workers: number;
  progress?: JobProgress;
  /** Predicted finish (RFC3339) from the last plan. */
  predictedCompletion?: string;
  /** Workers per future round at admission. */
  plannedRounds: number[];
  /** The round length the plan was made with, s: planned round i runs from `submittedAt` + i·slotSeconds (absent on records from before it was kept). */
  slotSeconds?: number;
  allocations: Allocation[];
  reasons: string[];
  checkpointDir: string;
  /** Training examples per epoch (from the profile run). */
  trainExamples: number;
  /** s from launching its process to the first iteration, and from the last iteration to exit (measured by the profile run). */
  launchSeconds?: number;
  exitSeconds?: number;
  /** Iterations/s at 1, 2, 4… workers (the scaling curve used). */
  curve: { gpus: number[]; iterPerSec: number[] };
  finishedAt?: string;
  error?: string;
}

/** A job event, as the SSE stream sends it. */
export interface JobEvent {
  type: 'state' | 'progress' | 'allocation' | 'log';
  time: string;
  data: Record<string, unknown>;
}

/** Epoch seconds (whole ms) as the record's RFC3339 time. */
export const rfc3339 = (s: Seconds): string => new Date(Math.round(s * 1000)).toISOString();

/** The scheduler's view of a stored record (epoch seconds; progress as done iterations). */
export function toTrainingJob(r: JobRecord): TrainingJob {
  return trainingJobOf(r, {
    deadline: r.deadline ? Date.parse(r.deadline) / 1000 : undefined,
    softDeadline: r.softDeadline ? Date.parse(r.softDeadline) / 1000 : undefined,
  });
}

/** The scheduler's view of a record with its deadlines in epoch seconds (absent: best-effort). */
export function trainingJobOf(r: JobRecord, { deadline, softDeadline }: { deadline?: Seconds; softDeadline?: Seconds }): TrainingJob {
  return {
    id: r.id,
    model: r.model,
    submitTime: Date.parse(r.submittedAt) / 1000,
    iterations: r.iterations,
    doneIterations: Math.min(r.progress?.step ?? 0, r.iterations),
    ...(deadline ? { deadline } : {}),
    ...(softDeadline ? { softDeadline } : {}),
    batchSize: r.batchSize,
    learningRate: r.learningRate,
    maxGpus: r.maxWorkers,
    curve: r.curve,
    currentGpus: r.workers,
    ...(r.progress?.gradNoiseScale ? { gradientNoiseScale: r.progress.gradNoiseScale } : {}),
    ...(r.launchSeconds !== undefined ? { launchSeconds: r.launchSeconds } : {}),
    ...(r.exitSeconds !== undefined ? { exitSeconds: r.exitSeconds } : {}),
  };
}

/**
 * The scheduler's state of this node (one node of `slots` worker slots): its live jobs. Admission
 * and the round loop plan from the same state.
 */
export function schedulerState(records: readonly JobRecord[], cluster: ClusterSpec, slotSeconds: number): SchedulerState {
  const live = records.filter((r) => !TERMINAL.has(r.state));
  // the round loop runs a round at once when a job ends, so its slots are free from its completion on
  return { cluster, slotSeconds, roundOnCompletion: true, jobs: live.map((r) => toTrainingJob(r)) };
}
