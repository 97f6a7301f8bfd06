/**
 * The training scheduler as the gateway sees it: the plain data the jobs API builds (a job, the
 * cluster, the admitted jobs) and the port it calls for admission, a forecast and a job's scaling
 * curve. Defined here, on the gateway side; implemented by the training scheduler
 * (the autoscaler's training policies, wired in at the composition root `cli/compose.ts`).
 *
 * Units: time is in seconds (`Seconds`) on whatever clock the caller uses (the trace clock in the
 * simulator, epoch seconds in the live loop); throughput is in iterations per second; GPU counts
 * are whole GPUs. No phase reads the clock, the environment or the network.
 */

/** Seconds on the caller's clock. */
export type Seconds = number;

/**
 * A job's scaling curve at one global batch size: throughput at each power-of-two worker count.
 * Built from the ElasticFlow throughput tables in simulation, from the profile run (1 and 2
 * workers, extrapolated) in the live system.
 */
export interface ScalingCurve {
  /** Worker counts with a known throughput, ascending (1, 2, 4, ...). */
  readonly gpus: readonly number[];
  /** Whole-job iterations per second at `gpus[i]` workers. Same length as `gpus`. */
  readonly iterPerSec: readonly number[];
}

/** A training job as the scheduler sees it. */
export interface TrainingJob {
  readonly id: string;
  readonly model: string;
  /** When the job was submitted (s). */
  readonly submitTime: Seconds;
  /** Total work in iterations (optimizer steps at `batchSize`). The API converts epochs to iterations. */
  readonly iterations: number;
  /** Iterations already done (reported progress, corrected by `fapes/correction`). */
  readonly doneIterations: number;
  /** Absolute hard deadline (s; live: epoch seconds, the jobs API's parse, unconverted on the way here). Absent = best-effort. */
  readonly deadline?: Seconds;
  /** Absolute soft deadline (s): worth finishing by, never guaranteed, never a reason to drop. */
  readonly softDeadline?: Seconds;
  /** Global batch size the curve was measured at. */
  readonly batchSize: number;
  /** Learning rate at `batchSize`; rescaled linearly when the batch is co-adapted. */
  readonly learningRate?: number;
  /** GPUs the user asked for; non-elastic baselines (Gandiva, Tiresias, Themis, FIFO, SJF) gang-schedule exactly this. */
  readonly requestedGpus?: number;
  /** Most workers the job may use (ElasticFlow's `max_gpu`). */
  readonly maxGpus: number;
  /** Throughput at `batchSize` per worker count. */
  readonly curve: ScalingCurve;
  /** GPUs the job holds right now (0 when waiting). */
  readonly currentGpus?: number;
  /** GPU-seconds the job has received so far (Tiresias' 2D-LAS attained service). */
  readonly attainedGpuSeconds?: number;
  /** Consecutive rounds the job has waited with 0 GPUs (FaPES pop-up, Gandiva time-slicing). */
  readonly waitingRounds?: number;
  /** Gradient noise scale φ reported by the runtime (FaPES / Pollux statistical efficiency). */
  readonly gradientNoiseScale?: number;
  /**
   * Seconds from (re)starting the job's process to its first iteration (process start, data
   * load), as the live system's profile run measured it; absent = 0 (the simulator charges its
   * own overheads).
   */
  readonly launchSeconds?: Seconds;
  /** Seconds from the last iteration to the process's exit (final checkpoint, evaluation); absent = 0. */
  readonly exitSeconds?: Seconds;
}

/** Cluster shape: a topology tree switch → node → GPU, all nodes alike. */
export interface ClusterSpec {
  readonly nodes: number;
  readonly gpusPerNode: number;
  /** Nodes under one switch (the tree's upper layer). Defaults to all nodes. */
  readonly nodesPerSwitch?: number;
}

/** One step of a plan: from `from` on (until the next step or completion) the job holds `gpus`. */
export interface PlanStep {
  readonly from: Seconds;
  readonly gpus: number;
}

/**
 * A job's schedule plan: GPUs per future round, run-length encoded on the slot grid that starts
 * at the plan's first step. `roundsOf(plan, n)` in `plan.ts` expands it to one number per round.
 */
export interface Plan {
  readonly jobId: string;
  readonly slotSeconds: Seconds;
  readonly steps: readonly PlanStep[];
  /** When the job's last iteration is predicted to finish (s, not rounded to the grid). */
  readonly predictedCompletion: Seconds;
  /** Until when the plan holds its GPUs, if not `predictedCompletion` rounded up to the slot grid. */
  readonly reservedUntil?: Seconds;
}

/** What the scheduler knows at a round: the cluster and the admitted, unfinished jobs. */
export interface SchedulerState {
  readonly cluster: ClusterSpec;
  /** Scheduling round (slot) length (s). 60 s default here, 240/60 s in ElasticFlow's runs, 600 s in FaPES. */
  readonly slotSeconds: Seconds;
  /** Admitted jobs that are not finished (running or waiting), best-effort ones included. */
  readonly jobs: readonly TrainingJob[];
  /** GPUs taken away from training this round (e.g. reclaimed by inference); default 0. */
  readonly unavailableGpus?: number;
  /**
   * True when the caller runs a round as soon as a job ends (the live service), so a job's GPUs
   * are free from its completion on; false (the simulator, ElasticFlow's model): they are held to
   * the end of that slot.
   */
  readonly roundOnCompletion?: boolean;
}

/** Answer of the admission phase; the API maps it to 201 (admitted) or 409 (not). */
export type AdmissionDecision =
  | { readonly admitted: true; readonly plan: Plan; readonly reason: string }
  | {
    readonly admitted: false;
    readonly reason: string;
    /** Earliest absolute deadline (s) that could be guaranteed now (the 409 counter-offer); null if none (e.g. the job cannot run on this cluster). */
    readonly earliestFeasibleDeadline: Seconds | null;
    /** The admitted job that would miss its deadline if this one were admitted; absent when the new job's own deadline is what fails. */
    readonly wouldBreak?: string;
  };

/** One profile-run measurement: a job's throughput at 1 or 2 workers. */
export interface ProfileSample {
  readonly gpus: 1 | 2;
  /** Measured iterations per second. */
  readonly iterPerSec: number;
}

/** What the scheduler predicts the live loop will do (`forecast`). */
export interface ScheduleForecast {
  /** jobId → predicted completion (s); absent if the job is not predicted to run within the horizon. */
  readonly completion: Readonly<Record<string, Seconds>>;
  /** jobId → workers held at `now + k·slot`, k = 0 … rounds−1 (0 after completion). */
  readonly workersPerRound: Readonly<Record<string, number[]>>;
}

/** The training scheduler's pure decisions the jobs API asks for (admission at `POST /system/jobs`). */
export interface TrainingScheduler {
  /** Whether `job` can be admitted now beside the admitted jobs in `state`, under the registered `policy`. */
  admit(job: TrainingJob, state: SchedulerState, now: Seconds, policy: string): AdmissionDecision;
  /** What the round loop will do under `policy` (a fresh policy instance: no loop's memory is touched). */
  forecast(policy: string, state: SchedulerState, now: Seconds): ScheduleForecast;
  /** A job's scaling curve up to `maxWorkers` from its profile run. */
  curveFromProfile(samples: readonly ProfileSample[], maxWorkers: number): ScalingCurve;
}
