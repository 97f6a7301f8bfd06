/** Lifecycle: admitted → running ⇄ waiting (0 workers this round) → completed | cancelled | failed. */
export type JobState = 'admitted' | 'running' | 'waiting' | 'completed' | 'cancelled' | 'failed';

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
  allocations: Allocation[];
  reasons: string[];
  checkpointDir: string;
  /** Training examples per epoch (from the profile run). */
  trainExamples: number;
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
