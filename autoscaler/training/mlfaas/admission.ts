/**
 * The `mlfaas` policy's admission (also `fapes`' and `edf-admission`'s for deadline jobs): ElasticFlow's
 * admission control (Algorithm 1), judged per arrival, with a counter-offer: a job is admitted iff, in
 * deadline order, it and every admitted job that was still satisfiable keep a minimum satisfactory
 * share. A rejected job gets the earliest deadline that could be guaranteed right now.
 */
import { alignUp } from '../free-gpu-timeline';
import { levelsOf } from '../curve';
import type { AdmissionDecision, AdmissionPhase, SchedulerState, Seconds, TrainingJob } from '../types';
import { capacityOf, edfPass, overheadOf, toFillJob, type ElasticFlowOptions } from './edf-pass';
import { earliestPlan } from './filling';

/** Would `job` with deadline `deadline` be admitted? Returns the plan if so. */
function tryAdmit(job: TrainingJob, deadline: Seconds, state: SchedulerState, now: Seconds, opts: ElasticFlowOptions) {
  const candidate: TrainingJob = { ...job, deadline };
  const pass = edfPass([...state.jobs, candidate], state, now, opts, job.id);
  if (pass.failedAt === undefined) return { ok: true as const, plan: pass.plans.get(job.id)! };
  if (pass.failedAt === job.id) return { ok: false as const, blame: job.id };
  // A later job failed: blame the new job only if that job was satisfiable without it.
  const base = edfPass(state.jobs, state, now, opts);
  if (base.infeasible.includes(pass.failedAt)) {
    // It was already lost; rerun without stopping to see whether anything else breaks.
    const full = edfPass([...state.jobs, candidate], state, now, opts);
    const newlyBroken = full.infeasible.filter((id) => !base.infeasible.includes(id));
    if (newlyBroken.length === 0) return { ok: true as const, plan: full.plans.get(job.id)! };
    return { ok: false as const, blame: newlyBroken[0] };
  }
  return { ok: false as const, blame: pass.failedAt };
}

/**
 * Earliest absolute deadline that could be guaranteed for `job` now (s, whole seconds), or null if
 * the job cannot run on this cluster at all.
 */
export function earliestFeasibleDeadline(
  job: TrainingJob,
  state: SchedulerState,
  now: Seconds,
  opts: ElasticFlowOptions = {},
): Seconds | null {
  const cap = capacityOf(state);
  if (levelsOf(job, cap).length === 0) return null;
  const safety = opts.safetySeconds ?? 0;
  // Lower bound: the job last in EDF order, as fast as the residual board allows.
  const base = edfPass(state.jobs, state, now, opts);
  const last = earliestPlan(base.board, toFillJob(job, cap, 0), state.slotSeconds);
  if (!last) return null;
  let lo = Math.ceil(last.predictedCompletion + safety + overheadOf(job));
  if (tryAdmit(job, lo, state, now, opts).ok) return lo;
  // Upper bound: later than every admitted deadline, so the new job is planned last.
  const latest = state.jobs.reduce((m, j) => Math.max(m, j.deadline ?? -Infinity), -Infinity);
  let hi = Math.max(lo, Math.ceil(latest) + 1);
  let guard = 0;
  while (!tryAdmit(job, hi, state, now, opts).ok && guard++ < 40) hi = alignUp(now, hi + (hi - now), state.slotSeconds);
  if (guard >= 40) return null;
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (tryAdmit(job, mid, state, now, opts).ok) hi = mid;
    else lo = mid;
  }
  return hi;
}

/** Admission as the REST API calls it (also for `?dryRun=true`: it changes nothing). */
export function admitMlfaas(
  job: TrainingJob,
  state: SchedulerState,
  now: Seconds,
  opts: ElasticFlowOptions = {},
): AdmissionDecision {
  const cap = capacityOf(state);
  if (job.deadline === undefined) {
    const pass = edfPass(state.jobs, state, now, opts);
    const plan = earliestPlan(pass.board, toFillJob(job, cap, 0), state.slotSeconds);
    if (!plan) return { admitted: false, reason: `no usable worker count ≤ ${cap} GPUs for ${job.model}`, earliestFeasibleDeadline: null };
    return { admitted: true, plan, reason: 'best-effort: runs on GPUs left after deadline jobs\' minimum shares; completion is a forecast, not a guarantee' };
  }
  const r = tryAdmit(job, job.deadline, state, now, opts);
  if (r.ok) {
    const gpus = r.plan.steps.map((s) => s.gpus);
    return {
      admitted: true,
      plan: r.plan,
      reason: `minimum satisfactory share ${Math.max(0, ...gpus)} GPUs finishes ${Math.ceil(r.plan.predictedCompletion - now)} s from now ≤ ` +
        `deadline ${Math.round(job.deadline - now)} s from now`,
    };
  }
  const earliest = earliestFeasibleDeadline(job, state, now, opts);
  const why =
    r.blame === job.id
      ? `deadline in ${Math.round(job.deadline - now)} s cannot be met with the GPUs left by admitted jobs`
      : `admitting it would make admitted job ${r.blame} miss its deadline`;
  return { admitted: false, reason: why, earliestFeasibleDeadline: earliest, ...(r.blame === job.id ? {} : { wouldBreak: r.blame }) };
}

export function mlfaasAdmission(opts: ElasticFlowOptions = {}): AdmissionPhase {
  return { admit: (job, state, now) => admitMlfaas(job, state, now, opts) };
}
