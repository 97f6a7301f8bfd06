/**
 * The admission entry point for the REST job API (`POST /system/jobs`, also with `?dryRun=true`:
 * it is pure and changes nothing). 201 ← `{ admitted: true, plan }`; 409 ← `{ admitted: false,
 * reason, earliestFeasibleDeadline }`.
 */
import { getPolicy } from './registry';
import { roundsOf } from './plan';
import type { AdmissionDecision, SchedulerState, Seconds, TrainingJob } from './types';

/**
 * Decides whether `job` can be admitted now with the jobs already admitted in `state`.
 * Policies without admission control admit everything with an earliest-completion forecast.
 */
export function admit(job: TrainingJob, state: SchedulerState, now: Seconds, policy = 'mlfaas'): AdmissionDecision {
  const p = getPolicy(policy);
  if (p.admission) return p.admission.admit(job, state, now);
  return getPolicy('mlfaas').admission!.admit({ ...job, deadline: undefined }, state, now);
}

/** GPUs per future round of an admitted plan, for the 201 body (`rounds` rounds from now). */
export function planRounds(decision: AdmissionDecision, rounds: number): number[] {
  return decision.admitted ? roundsOf(decision.plan, rounds) : [];
}
