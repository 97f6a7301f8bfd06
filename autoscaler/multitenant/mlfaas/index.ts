/**
 * `mlfaas` on a fixed cluster: our own multi-tenant controller (issue 24). What it uses that Faro
 * cannot: vertical shares (each job keeps warm replicas and the cluster's CPU is re-divided among
 * them every tick as CPU quotas, an instant change), our Kalman forecast with a measured uncertainty
 * band, an SLO guard that reacts within a tick to a queue building up, and an objective that knows
 * what the utility metric counts (a job-minute with > 1 % drops or a late p99 earns ~0, so under
 * overload it serves the jobs it can serve fully instead of all of them badly).
 *
 * Replicas (slow: a new one costs a cold start) are planned by `plan.ts`; quotas and accept rates
 * (fast) are set every tick by `allocate.ts`. Pure and deterministic: its state is a function of
 * the views it was given.
 */
import type { ClusterController, ClusterView, ControllerDecision, JobAllocation, JobView } from '../types';
import { allocate, type JobNeed } from './allocate';
import { cheapestSizing } from './latency';
import { freshForecast, observeMinutes, rateAt, type JobForecast } from './forecast';
import { DEFAULT_MLFAAS_PARAMS, type MlfaasParams } from './params';
import { coverage, fillReplicas, freshPlan, planReplicas, replicasFor, type PlanState } from './plan';
import { describe } from './reason';

export { DEFAULT_MLFAAS_PARAMS, type MlfaasParams } from './params';

export interface MlfaasOptions extends Partial<MlfaasParams> {
  /** CPU units the jobs share. */
  readonly capacity: number;
}

interface JobState {
  fc: JobForecast;
  plan: PlanState;
  prevQueue: number;
  served: boolean;
  /** The accept rate last set. */
  accept: number;
  /** The guard's rate, decaying (a burst the queue showed is not forgotten at the next tick). */
  guard: number;
}

/** SLO guard: the rate (req/s) the queue says is arriving now (served capacity + growth + drops); 0 with no queue. */
export function guardRate(tickS: number, j: JobView, prevQueue: number): number {
  if (j.queueLength <= 0 && j.droppedLastTick <= 0) return 0;
  const serving = (j.readyReplicas * j.quota * 1000) / j.processingMs;
  return serving + Math.max(0, j.queueLength - prevQueue) / tickS + j.droppedLastTick / tickS;
}

/** A runner may say a job's previous replica change is still under way (the Faro simulator's `scaling`). */
const isScaling = (j: JobView): boolean => (j as JobView & { scaling?: boolean }).scaling === true;

export function mlfaasClusterController(opts: MlfaasOptions): ClusterController {
  const p: MlfaasParams = { ...DEFAULT_MLFAAS_PARAMS, ...opts };
  if (!(opts.capacity > 0)) throw new Error(`mlfaas: capacity must be > 0, got ${opts.capacity}`);
  const nMax = Math.max(1, Math.floor(Math.min(p.maxReplicasPerJob, opts.capacity)));
  let states: JobState[] = [];
  /** The minute of the last decision and the mode chosen at its start. */
  let minute = -1;
  let mode: 'shared' | 'knapsack' = 'shared';

  function tick(view: ClusterView): ControllerDecision | null {
    const capacity = Math.min(opts.capacity, view.capacity);
    if (states.length !== view.jobs.length) {
      states = view.jobs.map(() => ({ fc: freshForecast(p.forecast), plan: freshPlan(), prevQueue: 0, served: true, accept: 1, guard: 0 }));
    }
    // Before the first minute the forecast knows nothing: an equal share of the cluster.
    const equalRate = ((capacity / view.jobs.length) * p.qPlan * 1000) / 2;
    const needs: JobNeed[] = [];
    const replicas: number[] = [];
    const guards: number[] = [];
    // The model's margin: one for a shared cluster, one for the knapsack's cost when overloaded (tuned apart).
    const margin = mode === 'knapsack' ? p.overloadSloTarget : p.sloTarget;
    const targets = view.jobs.map((j) => j.sloMs * margin);
    const means: number[] = [];
    const fcRates = view.jobs.map((j, i) => {
      const st = states[i];
      st.fc = observeMinutes(p.forecast, st.fc, j.minuteCounts);
      const now = guardRate(p.tickS, st.accept >= 1 ? j : { ...j, droppedLastTick: 0 }, st.prevQueue);
      st.guard = Math.max(now, st.guard * p.guardDecay);
      const guard = st.guard;
      guards.push(now);
      // The demand now, where the runner reports it (arrivals over the last window), with its Poisson band.
      const rps = j.arrivalRps;
      const w = Math.max(1, j.recentLatencyMs.windowS);
      const m = rateAt(st.fc, 0, 1);
      means.push(Math.max(Number.isNaN(m) ? 0 : m, rps === undefined ? 0 : p.nowWeight * rps));
      return (z: number, h: number): number => {
        const r = rateAt(st.fc, z, h);
        const fc = Number.isNaN(r) ? equalRate / j.processingMs : r;
        const seen = rps === undefined ? 0 : p.nowWeight * (rps + Math.max(0, z) * Math.sqrt(rps / w));
        return Math.max(fc, guard, seen);
      };
    });
    // Replicas: each job at least what its forecast at level zBase needs, then the cluster's budget
    // given out one replica at a time to the job covering the lowest forecast level.
    // Under overload, at least as many as the model's cheapest sizing (least CPU for the rate): the knapsack's cost.
    const bases = view.jobs.map((j, i) => {
      const rate = fcRates[i](p.zBase, p.planHorizon);
      const fewest = replicasFor(p, j.processingMs, rate, targets[i], nMax);
      const cheapest = p.cheapestBase && mode === 'knapsack' ? cheapestSizing(p.model, j.processingMs, rate, targets[i], p.qFloor, nMax) : null;
      return Math.max(fewest, cheapest?.replicas ?? 0);
    });
    const budget = Math.floor(capacity * (1 + p.overcommit) + 1e-9);
    const cover = (i: number, n: number): number =>
      coverage(p, view.jobs[i].processingMs, targets[i], n, (z) => fcRates[i](z, p.planHorizon));
    const filled = fillReplicas(bases, budget, cover, nMax);
    view.jobs.forEach((j, i) => {
      const st = states[i];
      const plan = planReplicas(p, st.plan, {
        nowS: view.nowS,
        replicas: j.replicas,
        ready: j.readyReplicas,
        want: filled[i],
        wantMin: bases[i],
        scaling: isScaling(j),
      });
      replicas.push(plan.replicas);
      const backlog = j.queueLength / p.drainS;
      needs.push({
        pMs: j.processingMs,
        targetMs: targets[i],
        ready: Math.min(j.readyReplicas, plan.replicas),
        held: plan.pods,
        served: st.served,
        rate: (z: number) => fcRates[i](z, 1) + backlog,
        mean: means[i],
      });
    });
    const m = Math.floor(view.nowS / 60 + 1e-9);
    const alloc = allocate(p, needs, capacity, p.minuteLock && m === minute ? mode : undefined);
    minute = m;
    mode = alloc.overload ? 'knapsack' : 'shared';
    const jobs: Array<JobAllocation | null> = view.jobs.map((j, i) => {
      const st = states[i];
      st.prevQueue = j.queueLength;
      st.served = alloc.served[i];
      const q = Math.max(p.qFloor, Math.min(1, Math.floor(alloc.quotas[i] * 1e4) / 1e4));
      const a = Math.max(0, Math.min(1, alloc.acceptRates[i]));
      const out: { replicas?: number; quota?: number; acceptRate?: number } = {};
      if (replicas[i] !== j.replicas) out.replicas = replicas[i];
      if (Math.abs(q - j.quota) > 1e-4) out.quota = q;
      if (Math.abs(a - st.accept) > 1e-6) out.acceptRate = a;
      st.accept = a;
      return Object.keys(out).length > 0 ? out : null;
    });
    if (jobs.every((x) => x === null)) return null;
    return { jobs, reason: describe(view, jobs, alloc, guards) };
  }

  return { name: 'mlfaas', tickS: p.tickS, tick };
}
