/**
 * ElasticFlow's progressive filling (Algorithm 1's inner function) on the forward board: the
 * minimum satisfactory share, i.e. the smallest worker level that still finishes the job's
 * remaining iterations by its deadline given the GPUs other jobs already reserved. As in the
 * authors' simulator, the plan runs at the level below (`qp`) until a point `p` and at the
 * satisfying level `q` from `p` on, where `p` is the latest slot from which `q` alone suffices.
 */
import { alignDown, alignUp, reserve, type FreeGpuTimeline } from '../free-gpu-timeline';
import { fitLevel, throughputAt } from '../curve';
import { mergeSteps } from '../plan';
import type { Plan, PlanStep, ScalingCurve, Seconds } from '../types';

/** What filling needs to know about a job. */
export interface FillJob {
  readonly id: string;
  /** Remaining iterations. */
  readonly need: number;
  /** Absolute deadline to plan against (s); Infinity = none. */
  readonly deadline: Seconds;
  /** Usable worker counts, ascending. */
  readonly levels: readonly number[];
  readonly curve: ScalingCurve;
}

/** Iterations the job can do before its deadline if it holds up to `q` workers wherever free. */
function capacity(b: FreeGpuTimeline, job: FillJob, q: number): number {
  let cap = 0;
  const n = b.times.length;
  for (let i = 0; i < n; i++) {
    const s = b.times[i];
    if (s >= job.deadline) break;
    const e = Math.min(i + 1 < n ? b.times[i + 1] : Infinity, job.deadline);
    const g = fitLevel(job.levels, Math.min(q, b.free[i]));
    if (g === 0) continue;
    if (e === Infinity) return Infinity;
    cap += (e - s) * throughputAt(job.curve, g);
    if (cap >= job.need) return cap;
  }
  return cap;
}

/** Latest slot-grid time p such that level q from p to the deadline finishes the work. */
function latestStart(b: FreeGpuTimeline, job: FillJob, q: number, slot: Seconds): Seconds {
  if (job.deadline === Infinity) return b.now;
  let acc = 0;
  for (let i = b.times.length - 1; i >= 0; i--) {
    const s = b.times[i];
    if (s >= job.deadline) continue;
    const e = Math.min(i + 1 < b.times.length ? b.times[i + 1] : Infinity, job.deadline);
    const rate = throughputAt(job.curve, fitLevel(job.levels, Math.min(q, b.free[i])));
    if (rate <= 0) continue;
    if (acc + (e - s) * rate >= job.need) {
      return Math.max(s, alignDown(b.now, e - (job.need - acc) / rate, slot));
    }
    acc += (e - s) * rate;
  }
  return b.now;
}

/**
 * Forward plan: level `qp` before `p`, `q` from `p` on, each capped by the free GPUs; null if the
 * work does not finish (only possible when the board never frees enough GPUs).
 */
export function forwardPlan(b: FreeGpuTimeline, job: FillJob, q: number, qp: number, p: Seconds, slot: Seconds): Plan | null {
  const steps: PlanStep[] = [];
  let acc = 0;
  const n = b.times.length;
  for (let i = 0; i < n; i++) {
    const s = b.times[i];
    const e = i + 1 < n ? b.times[i + 1] : Infinity;
    const pieces: Array<[number, number, number]> =
      s < p && p < e ? [[s, p, qp], [p, e, q]] : [[s, e, s >= p ? q : qp]];
    for (const [ps, pe, level] of pieces) {
      const g = fitLevel(job.levels, Math.min(level, b.free[i]));
      steps.push({ from: ps, gpus: g });
      const rate = throughputAt(job.curve, g);
      if (rate <= 0) continue;
      if (pe === Infinity || acc + (pe - ps) * rate >= job.need) {
        const completion = ps + (job.need - acc) / rate;
        return { jobId: job.id, slotSeconds: slot, steps: mergeSteps(steps), predictedCompletion: completion };
      }
      acc += (pe - ps) * rate;
    }
  }
  return null;
}

/** Minimum-satisfactory-share plan by the deadline, or null if no level meets it. */
export function minSharePlan(b: FreeGpuTimeline, job: FillJob, slot: Seconds): Plan | null {
  if (job.need <= 0) return { jobId: job.id, slotSeconds: slot, steps: [], predictedCompletion: b.now };
  const L = job.levels;
  if (L.length === 0 || capacity(b, job, L[L.length - 1]) < job.need) return null;
  let lo = 0;
  let hi = L.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (capacity(b, job, L[mid]) >= job.need) hi = mid;
    else lo = mid + 1;
  }
  const q = L[lo];
  const qp = lo > 0 ? L[lo - 1] : 0;
  const plan = forwardPlan(b, job, q, qp, latestStart(b, job, q, slot), slot);
  return plan && plan.predictedCompletion <= job.deadline + 1e-6 ? plan : null;
}

/** Earliest-completion plan: as many workers as fit, from now on, ignoring any deadline. */
export function earliestPlan(b: FreeGpuTimeline, job: FillJob, slot: Seconds): Plan | null {
  if (job.need <= 0) return { jobId: job.id, slotSeconds: slot, steps: [], predictedCompletion: b.now };
  const top = job.levels[job.levels.length - 1];
  if (top === undefined) return null;
  return forwardPlan(b, { ...job, deadline: Infinity }, top, top, b.now, slot);
}

/**
 * Reserves a plan on the board until its completion rounded up to the slot grid, or until the
 * completion itself when a round runs as soon as a job ends (`untilCompletion`).
 */
export function reservePlan(b: FreeGpuTimeline, plan: Plan, untilCompletion = false): void {
  reserve(b, plan.steps, untilCompletion ? plan.predictedCompletion : alignUp(b.now, plan.predictedCompletion, plan.slotSeconds));
}
