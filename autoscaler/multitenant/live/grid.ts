/**
 * `grid`: a small, honest utility-maximising fixed-cluster controller, the live runner's fallback
 * (and its tests' controller) beside engineer F's `mlfaas` one. Every tick it splits the cluster
 * into steps of `stepCores` and spreads them over the jobs to maximise the cluster's utility, Σ over
 * jobs, exactly on that grid (gridPlan); each job's utility is Faro's PenaltySum term at its best accept rate:
 * min(SLO / p-th latency, 1) · (1 − φ(dropped)), latency by M/D/c (queue-model.ts) at the job's
 * offered rate now. Cores become whole replicas first, each at cores / replicas as its CPU quota.
 * A new plan is applied only when it raises the cluster's utility by more than `minGain`, or when
 * the current allocation exceeds the capacity. Deterministic; its state is the last accept rates.
 */
import type { ClusterController, ClusterView, ControllerDecision, JobAllocation } from '../types';
import { bestUtility, ModelJob, splitCores } from './queue-model';
import { describeMoves, modelOf, utilityAt } from './trade-off';

export { describeMoves } from './trade-off';

export interface GridOptions {
  /** Cores handed out per step (and each job's least), default 0.1. */
  stepCores?: number;
  /** Least improvement of the cluster's utility (Σ over jobs) worth a change, default 0.02. */
  minGain?: number;
  /** Accept-rate grid, default 0.05. */
  acceptStep?: number;
  /** Tick period, s (the live runner's interval is its own), default 1. */
  tickS?: number;
}

/** One job's plan. */
interface Plan {
  cores: number;
  utility: number;
  acceptRate: number;
}

const fmt = (x: number, d = 2) => x.toFixed(d);

/**
 * The plan: `capacity` cut into steps, every job at least one step, the steps spread to maximise Σ
 * utility exactly on that grid (dynamic programming over jobs × steps: a job's utility is not
 * concave in its cores, a queue near saturation gains nothing from the first few steps, so handing
 * out steps one at a time starves it). Among equal sums the plan with fewer cores wins (the rest
 * stays free). Pure.
 */
export function gridPlan(jobs: readonly ModelJob[], capacity: number, step: number, acceptStep: number): Plan[] {
  const units = Math.floor(capacity / step + 1e-9);
  const n = jobs.length;
  if (units < n) throw new Error(`capacity ${capacity} holds fewer than one step of ${step} core per job (${n} jobs)`);
  // u[i][k]: job i's best utility with k steps (k ≥ 1)
  const u = jobs.map((j) => Array.from({ length: units - n + 2 }, (_, k) => (k === 0 ? null : bestUtility(j, k * step, acceptStep))));
  const most = units - n + 1;
  // best[i][c]: the best Σ over jobs i.. with c steps left for them; pick[i][c]: job i's steps there
  let next = new Array<number>(units + 1).fill(0);
  const pick: number[][] = [];
  for (let i = n - 1; i >= 0; i--) {
    const cur = new Array<number>(units + 1).fill(-Infinity);
    const choice = new Array<number>(units + 1).fill(0);
    for (let c = 0; c <= units; c++) {
      for (let k = 1; k <= Math.min(most, c - (n - 1 - i)); k++) {
        const v = u[i][k]!.utility + next[c - k];
        if (v > cur[c] + 1e-9) {
          cur[c] = v;
          choice[c] = k;
        }
      }
    }
    pick[i] = choice;
    next = cur;
  }
  // the fewest steps that reach the best sum
  let c = units;
  for (let x = 0; x <= units; x++) if (next[x] > -Infinity && next[x] >= next[c] - 1e-9) {
    c = x;
    break;
  }
  const plans: Plan[] = [];
  for (let i = 0; i < n; i++) {
    const k = pick[i][c];
    const b = u[i][k]!;
    plans.push({ cores: Math.round(k * step * 1000) / 1000, utility: b.utility, acceptRate: b.acceptRate });
    c -= k;
  }
  return plans;
}

export function gridClusterController(opts: GridOptions = {}): ClusterController {
  const step = opts.stepCores ?? 0.1;
  const minGain = opts.minGain ?? 0.02;
  const acceptStep = opts.acceptStep ?? 0.05;
  const accept = new Map<string, number>();
  return {
    name: 'grid',
    tickS: opts.tickS ?? 1,
    tick(view: ClusterView): ControllerDecision | null {
      const jobs = view.jobs;
      if (jobs.length === 0) return null;
      const models = jobs.map(modelOf);
      const curCores = jobs.map((j) => j.replicas * j.quota);
      const curUtility = jobs.map((j, i) => {
        const a = accept.get(j.name) ?? 1;
        return curCores[i] > 0 ? utilityAt(models[i], curCores[i], a) : 0;
      });
      const plans = gridPlan(models, view.capacity, step, acceptStep);
      const before = curUtility.reduce((s, u) => s + u, 0);
      const after = plans.reduce((s, p) => s + p.utility, 0);
      const over = curCores.reduce((s, c) => s + c, 0) > view.capacity + 1e-6;
      const acceptChanged = jobs.some((j, i) => Math.abs((accept.get(j.name) ?? 1) - plans[i].acceptRate) > 1e-9);
      if (!over && after - before <= minGain && !(acceptChanged && after >= before)) return null;
      const out: Array<JobAllocation | null> = plans.map((p, i) => {
        const { replicas, quota } = splitCores(p.cores);
        const j = jobs[i];
        const same = replicas === j.replicas && Math.abs(quota - j.quota) < 1e-6 && Math.abs((accept.get(j.name) ?? 1) - p.acceptRate) < 1e-9;
        return same ? null : { replicas, quota: Math.round(quota * 1000) / 1000, acceptRate: p.acceptRate };
      });
      for (let i = 0; i < jobs.length; i++) accept.set(jobs[i].name, plans[i].acceptRate);
      const drops = plans
        .map((p, i) => (p.acceptRate < 1 ? `${jobs[i].name} admits ${Math.round(p.acceptRate * 100)}% (offered ${fmt(models[i].lambda, 1)} req/s)` : ''))
        .filter(Boolean);
      const moves = describeMoves(jobs.map((j) => j.name), curCores, plans.map((p) => p.cores));
      const why = over ? ` (the current allocation, ${fmt(curCores.reduce((s, c) => s + c, 0))} cores, exceeds ${fmt(view.capacity)})` : '';
      const reason = `${moves}: utility ${fmt(before)} → ${fmt(after)}${why}${drops.length ? `; ${drops.join('; ')}` : ''}`;
      return { jobs: out, reason };
    },
  };
}
