/**
 * The training scheduler's contract. Everything here is plain data: the REST job API, the live
 * training round and the simulator build these values and call the pure phases with them.
 *
 * Units: time is in seconds (`Seconds`) on whatever clock the caller uses (the trace clock in the
 * simulator, epoch seconds in the live loop); throughput is in iterations per second; GPU counts
 * are whole GPUs. No phase reads the clock, the environment or the network.
 */

import type { Seconds, ScalingCurve, TrainingJob, ClusterSpec, PlanStep, Plan, SchedulerState,
  AdmissionDecision } from '../../gateway/ports/training-scheduler';

/** The data the gateway's jobs API shares with the scheduler is defined with its port (gateway side). */
export type { Seconds, ScalingCurve, TrainingJob, ClusterSpec, PlanStep, Plan, SchedulerState, AdmissionDecision };

/** One round's allocation: GPUs per job for the coming round, with reasons. */
export interface RoundDecision {
  /** jobId → GPUs for the next round (0 = wait). Jobs missing here get 0. */
  readonly gpus: Readonly<Record<string, number>>;
  /** jobId → plan, for policies that plan ahead (ElasticFlow). */
  readonly plans?: Readonly<Record<string, Plan>>;
  /** jobId → why it got what it got. */
  readonly reasons: Readonly<Record<string, string>>;
  /** Summary for logs and the jobs API. */
  readonly reason: string;
  /** Earliest time the policy wants to be asked again even if nothing happens (a plan step). */
  readonly nextDecisionAt?: Seconds;
}

/** jobId → global GPU indices (node × gpusPerNode + local index). */
export type Placement = Readonly<Record<string, readonly number[]>>;

/** Admission phase: admit a new job given the admitted ones, or say why not and what deadline would work. */
export interface AdmissionPhase {
  admit(job: TrainingJob, state: SchedulerState, now: Seconds): AdmissionDecision;
  /**
   * Judges the deadline arrivals of one scheduling event together (one decision per job, in
   * order). Absent = the caller admits them one at a time with `admit`.
   */
  admitEvent?(jobs: readonly TrainingJob[], state: SchedulerState, now: Seconds): AdmissionDecision[];
}

/** Allocation phase: GPUs per job for the next round. */
export interface AllocationPhase {
  allocate(state: SchedulerState, now: Seconds): RoundDecision;
}

/** Placement phase: which GPUs each job gets; `previous` lets jobs keep their GPUs. */
export interface PlacementPhase {
  place(gpus: Readonly<Record<string, number>>, cluster: ClusterSpec, previous: Placement): Placement;
}

/** A registered scheduling policy: one per name in `registry.ts`. */
export interface TrainingPolicy {
  readonly name: string;
  readonly description: string;
  /** Absent = admit everything (the job may still finish late). */
  readonly admission?: AdmissionPhase;
  readonly allocation: AllocationPhase;
  readonly placement: PlacementPhase;
  /** True if the policy may change a running job's GPU count (elastic); false = gang-scheduled at `requestedGpus`. */
  readonly elastic: boolean;
  /** True if the policy uses ElasticFlow's hand-coded per-model `max_gpu` table (else the largest usable column). */
  readonly elasticMaxGpus?: boolean;
  /** True if the policy co-adapts batch size (and LR) with the worker count when the job reports a GNS. */
  readonly adaptsBatch?: boolean;
}
