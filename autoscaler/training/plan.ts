/** Plan helpers for callers (the jobs API shows GPUs per future round). */
import type { Plan, PlanStep, Seconds } from './types';

/** GPUs the plan gives at time t (0 before the first step or after completion). */
export function gpusAt(plan: Plan, t: Seconds): number {
  if (t >= plan.predictedCompletion || plan.steps.length === 0 || t < plan.steps[0].from) return 0;
  let g = 0;
  for (const s of plan.steps) {
    if (s.from > t) break;
    g = s.gpus;
  }
  return g;
}

/** Expands a plan to GPUs per round for `rounds` rounds from its first step (0 after completion). */
export function roundsOf(plan: Plan, rounds: number): number[] {
  const start = plan.steps.length ? plan.steps[0].from : 0;
  const out: number[] = [];
  for (let k = 0; k < rounds; k++) out.push(gpusAt(plan, start + k * plan.slotSeconds));
  return out;
}

/** Merges consecutive steps with equal GPU counts. */
export function mergeSteps(steps: readonly PlanStep[]): PlanStep[] {
  const out: PlanStep[] = [];
  for (const s of steps) {
    if (out.length && out[out.length - 1].gpus === s.gpus) continue;
    if (out.length && out[out.length - 1].from === s.from) out[out.length - 1] = s;
    else out.push(s);
  }
  return out;
}

/** GPU-seconds a plan uses until its completion. */
export function gpuSeconds(plan: Plan): number {
  let total = 0;
  for (let k = 0; k < plan.steps.length; k++) {
    const end = k + 1 < plan.steps.length ? plan.steps[k + 1].from : plan.predictedCompletion;
    total += plan.steps[k].gpus * Math.max(0, Math.min(end, plan.predictedCompletion) - plan.steps[k].from);
  }
  return total;
}
