import type { AdmissionDecision, Seconds, TrainingJob } from '../ports/training-scheduler';
import type { ProviderInfo } from '../providers/function-provider';

/** What one unit of training capacity is called on this node (singular, plural). */
export interface SlotNoun {
  one: string;
  many: string;
}

/**
 * The provider's word for a training worker slot: the local provider runs a job's workers as
 * threads on this machine's CPUs ("worker slots"); an orchestrator schedules accelerators ("GPUs").
 */
export function slotNounOf(info: ProviderInfo): SlotNoun {
  return info.orchestration === 'local' ? { one: 'worker slot', many: 'worker slots' } : { one: 'GPU', many: 'GPUs' };
}

export const countOf = (n: number, noun: SlotNoun) => `${n} ${n === 1 ? noun.one : noun.many}`;

/** A policy's reason in this node's words: the policies, shared with the GPU-cluster simulator, say "GPUs". */
export function inNodeWords(reason: string, noun: SlotNoun): string {
  return reason
    .replace(/\b(\d+) GPUs?\b/g, (_, n: string) => countOf(Number(n), noun))
    .replace(/\bGPUs\b/g, noun.many)
    .replace(/\bGPU\b/g, noun.one);
}
const iso = (s: Seconds) => new Date(s * 1000).toISOString();
const fromNow = (t: Seconds, now: Seconds) => `${iso(t)} (${Math.max(0, Math.ceil(t - now))} s from now)`;

export interface RejectionContext {
  job: TrainingJob;
  /** Admitted, unfinished jobs. */
  admitted: readonly TrainingJob[];
  now: Seconds;
  /** Worker slots of the node. */
  capacity: number;
  noun: SlotNoun;
  /** Predicted completion of the job if it ran alone on the node (s), or undefined if it cannot run. */
  alone: Seconds | undefined;
}

/**
 * The 409 body for a job not admitted: why, precisely (too soon even alone with every slot; or
 * which admitted jobs hold the slots; or which admitted job would miss its deadline), and the
 * earliest deadline that could be guaranteed now, as RFC3339 and as seconds from now.
 */
export function rejectionBody(d: Extract<AdmissionDecision, { admitted: false }>, c: RejectionContext): Record<string, unknown> {
  const { job, now, noun } = c;
  const dl = job.deadline!;
  const m = Math.min(job.maxGpus, c.capacity);
  const slots = m === c.capacity ? `all ${countOf(c.capacity, noun)}` : `${countOf(m, noun)} (its max_workers) of ${c.capacity}`;
  const start = (job.launchSeconds ?? 0) > 0 ? ` (${job.launchSeconds!.toFixed(1)} s process start included)` : '';
  const needs = c.alone === undefined ? '' : `${Math.ceil(c.alone - now)} s${start}`;
  let why: string;
  if (d.earliestFeasibleDeadline === null || c.alone === undefined) {
    why = `the job cannot run on this node with at most ${countOf(m, noun)}: ${inNodeWords(d.reason, noun)}`;
  } else if (dl < c.alone) {
    why = `deadline ${fromNow(dl, now)} is too soon: even alone with ${slots} the job needs ${needs}`;
  } else if (d.wouldBreak) {
    const other = c.admitted.find((j) => j.id === d.wouldBreak);
    why = `deadline ${fromNow(dl, now)} is feasible alone (${needs}), but admitting the job would make admitted ` +
      `job ${d.wouldBreak}${other?.deadline ? ` (deadline ${fromNow(other.deadline, now)})` : ''} miss its deadline`;
  } else {
    const ahead = c.admitted.filter((j) => j.deadline !== undefined && j.deadline <= dl).sort((a, b) => a.deadline! - b.deadline!);
    const list = ahead.slice(0, 5).map((j) => `${j.id} (deadline ${fromNow(j.deadline!, now)}, holding ${countOf(j.currentGpus ?? 0, noun)})`);
    why =
      ahead.length > 0
        ? `deadline ${fromNow(dl, now)} cannot be met: alone the job needs ${needs}, but the ${countOf(c.capacity, noun)} are reserved ` +
            `for ${ahead.length} admitted job(s) with earlier deadlines: ${list.join(', ')}${ahead.length > 5 ? ', …' : ''}`
        : `deadline ${fromNow(dl, now)} cannot be met on the ${countOf(c.capacity, noun)} of this node (alone the job ` +
            `needs ${needs}): ${inNodeWords(d.reason, noun)}`;
  }
  const e = d.earliestFeasibleDeadline;
  if (e !== null) why += `; the earliest deadline that can be guaranteed now is ${fromNow(e, now)}`;
  return {
    error: { code: 'deadline_infeasible', message: why, field: 'deadline' },
    earliestFeasibleDeadline: e === null ? null : iso(e),
    earliestFeasibleDeadlineSeconds: e === null ? null : Math.max(0, Math.ceil(e - now)),
  };
}

/** The reason recorded for an admitted job: what is guaranteed and what is predicted. */
export function admittedReason(job: TrainingJob, d: Extract<AdmissionDecision, { admitted: true }>, predicted: Seconds | undefined, now: Seconds,
  noun: SlotNoun): string {
  const pred = predicted === undefined ? 'no completion predicted yet' : `predicted to finish ${fromNow(predicted, now)} with the ${noun.many} it is allocated`;
  if (job.deadline === undefined) return `best-effort: ${pred} (a forecast, not a guarantee)`;
  const share = Math.max(0, ...d.plan.steps.map((s) => s.gpus));
  return `deadline ${fromNow(job.deadline, now)} guaranteed: a minimum share of ${countOf(share, noun)} finishes by it; ${pred}`;
}
