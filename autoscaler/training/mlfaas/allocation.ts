/**
 * The `mlfaas` policy's allocation, ElasticFlow's resource allocation (Algorithm 2): every admitted deadline job first gets its
 * minimum satisfactory share for the coming slot; the GPUs left go, one power-of-two step at a
 * time, to the job with the largest marginal return (throughput gained per added GPU, normalised
 * by the job's single-worker throughput so different models compare). Best-effort, soft-deadline
 * and no-longer-satisfiable jobs compete only for those left-over GPUs.
 */
import { levelsOf, throughputAt } from '../curve';
import { greedyFill } from '../marginal';
import type { AllocationPhase, Plan, RoundDecision, SchedulerState, Seconds, TrainingJob } from '../types';
import { capacityOf, edfPass, type ElasticFlowOptions } from './edf-pass';

/** Normalised marginal return of going from `from` to `to` workers. */
export function marginalReturn(job: TrainingJob, from: number, to: number): number {
  const first = job.curve.gpus.findIndex((g, i) => job.curve.iterPerSec[i] > 0);
  if (first < 0) return 0;
  const unit = job.curve.iterPerSec[first] / job.curve.gpus[first];
  return (throughputAt(job.curve, to) - throughputAt(job.curve, from)) / (to - from) / unit;
}

export function allocateMlfaas(state: SchedulerState, now: Seconds, opts: ElasticFlowOptions = {}, name = 'mlfaas'): RoundDecision {
  const cap = capacityOf(state);
  const pass = edfPass(state.jobs, state, now, opts);
  const gpus: Record<string, number> = {};
  const reasons: Record<string, string> = {};
  const plans: Record<string, Plan> = {};
  let used = 0;
  let nextDecisionAt = Infinity;
  for (const [id, plan] of pass.plans) {
    plans[id] = plan;
    const first = plan.steps[0];
    const g = first && first.from <= now ? first.gpus : 0;
    gpus[id] = g;
    used += g;
    reasons[id] = `minimum satisfactory share ${g} GPUs (plan finishes ${Math.ceil(plan.predictedCompletion - now)} s from now)`;
    for (const s of plan.steps) if (s.from > now) { nextDecisionAt = Math.min(nextDecisionAt, s.from); break; }
  }
  const lost = new Set(pass.infeasible);
  const before = { ...gpus };
  const active = state.jobs.filter((j) => j.iterations > j.doneIterations && levelsOf(j, cap).length > 0);
  // Deadline jobs with a plan first (they already hold their share), then the rest by deadline or age.
  greedyFill(active, gpus, cap - used, cap, marginalReturn, (j) => (j.deadline ?? j.softDeadline ?? Infinity) + j.submitTime * 1e-9);
  for (const j of active) {
    const g = gpus[j.id] ?? 0;
    const extra = g - (before[j.id] ?? 0);
    if (lost.has(j.id)) reasons[j.id] = `deadline ${Math.round(j.deadline! - now)} s from now no longer satisfiable: best-effort, ${g} GPUs from the left-over`;
    else if (j.deadline === undefined) reasons[j.id] = `${j.softDeadline !== undefined ? 'soft-deadline' : 'best-effort'}: ${g} GPUs from the left-over`;
    else if (extra > 0) reasons[j.id] += `, +${extra} by marginal return`;
  }
  const total = Object.values(gpus).reduce((a, b) => a + b, 0);
  return {
    gpus,
    plans,
    reasons,
    reason: `${name}: ${pass.plans.size} guaranteed jobs use ${used} GPUs as minimum shares, ${total - used} more by marginal return, ${cap - total} idle`,
    nextDecisionAt: Number.isFinite(nextDecisionAt) ? nextDecisionAt : undefined,
  };
}

export function mlfaasAllocation(opts: ElasticFlowOptions = {}, name = 'mlfaas'): AllocationPhase {
  return { allocate: (state, now) => allocateMlfaas(state, now, opts, name) };
}
