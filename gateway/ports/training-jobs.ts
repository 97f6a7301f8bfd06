import type Redis from 'ioredis';
import type { SlotNoun } from '../jobs/admission-answer';
import type { JobEvent, JobProgress, JobRecord } from '../jobs/job-record';

/**
 * The seam between the training round loop and the gateway's jobs, defined on the gateway side:
 * the loop (the autoscaler's, wired in at the composition root `cli/compose.ts`) reads and records
 * jobs through a `JobBook` (Redis: `gateway/jobs/job-store.ts`) and runs their processes through a
 * `JobLauncher` (this node's images and sandbox: `gateway/jobs/training-functions.ts` with
 * `node-runtime/job-runner.ts`; pods: `providers/kubernetes/kube-training.ts`), as the inference
 * loop reads Redis and acts through the `FunctionProvider`.
 */

/** How a run ended; `suspended`: stopped for a shutdown (checkpoint kept), to be resumed by the next scheduler. */
export type RunnerEnd = 'completed' | 'failed' | 'cancelled' | 'suspended';

/** A run's final state in its record. */
export type FinalState = Exclude<RunnerEnd, 'suspended'>;

/** What a job's process reports while it runs. */
export interface RunnerHooks {
  progress(p: JobProgress): void;
  log(text: string): void;
}

/** What the loop reads and writes of the jobs (records, events, the queue of admitted jobs). */
export interface JobBook {
  /** The BullMQ queue every admitted job waits in until it ends (the loop's worker takes from it). */
  readonly queueName: string;
  /** Every record, oldest submission first. */
  list(): Promise<JobRecord[]>;
  get(id: string): Promise<JobRecord | undefined>;
  /** Atomic read-modify-write of one record: a cancel elsewhere and a round cannot undo each other. */
  update(id: string, patch: (r: JobRecord) => void): Promise<JobRecord | undefined>;
  event(id: string, e: JobEvent): Promise<void>;
  setProgress(id: string, p: JobProgress): Promise<void>;
  /** No process runs the job now: `resuming`, workers 0, with the reason. */
  markResuming(id: string, reason: string): Promise<void>;
  /** Final state, once: a final state already recorded (a cancel by any gateway) is kept. */
  finish(id: string, end: FinalState, error?: string): Promise<void>;
  /** Seconds until the queue lock another scheduler holds on the job expires (0: none held). */
  lockSecondsLeft(id: string): Promise<number>;
}

/** Where the plan puts a job's workers (on a cluster; absent on one node). */
export interface WorkerPlace {
  node: string;
  /** The node's GPU indices the job holds (GPU nodes). */
  devices?: number[];
  /** CPU cores the job holds (nodes whose worker slots are cores). */
  cpus?: number;
}

/** One job's training process, run at the worker count the loop sets (0: stopped, checkpoint kept). */
export interface JobProcess {
  readonly workers: number;
  /** Where the running allocation is (undefined: stopped, or on one node). */
  readonly place?: WorkerPlace;
  /** Resolves once, when the run ends. */
  readonly ended: Promise<RunnerEnd>;
  /** Serialised: a change of count (or of place) restarts the process from its checkpoint. */
  setWorkers(n: number, place?: WorkerPlace): Promise<void>;
  /** Stops the process (checkpoint kept); the run ends as `cancelled`. */
  cancel(): Promise<void>;
  /** Stops the process for a shutdown (checkpoint kept); the run ends as `suspended`. */
  suspend(): Promise<void>;
}

/** Starts nothing yet: resolves the job's function (image, dataset, sandbox) into a process to run. */
export interface JobLauncher {
  /** Throws (a `PlatformError`) when the job cannot run here: its function, image or dataset is gone. */
  launch(rec: JobRecord, hooks: RunnerHooks): Promise<JobProcess>;
}

/** The training round loop as the gateway holds it, when it runs in this process. */
export interface LocalTrainingLoop {
  /** Stops the job's process if this process runs it. */
  cancelLocal(id: string): Promise<void>;
}

/** A running round loop the gateway stops on close. */
export interface RunningTrainingLoop extends LocalTrainingLoop {
  close(): Promise<void>;
}

/** What the gateway hands the loop it starts (a gateway running the local agent: jobs are its children). */
export interface TrainingLoopParts {
  redis: Redis;
  book: JobBook;
  launcher: JobLauncher;
  noun: SlotNoun;
}

/** Starts the training round loop (injected by the composition root). */
export type TrainingLoopStarter = (parts: TrainingLoopParts) => Promise<RunningTrainingLoop>;
