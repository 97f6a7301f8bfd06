/**
 * Re-dividing the cluster's CPU among the jobs' warm replicas, every tick (a quota change is
 * instant: a cgroup CFS quota, no cold start). Pure.
 *
 * Normal mode (the cluster can carry every job at its median forecast): every job is provisioned
 * for the same forecast level z (mean + z·σ of its rate, plus its backlog), the largest z the
 * capacity allows (bisection), so the CPU goes where the uncertainty is; what is left raises all
 * quotas in proportion (a faster replica only lowers latency).
 *
 * Overload (it cannot): the metric gives a job-minute with more than 1 % of its requests dropped or
 * late a utility near 0, so serving every job a little earns nothing. Knapsack by count: serve the
 * jobs that are cheapest to serve fully (all values are 1, so cheapest-first is optimal), with a
 * discount for the jobs served now (switching costs a minute of warm-up in the queues); the CPU left
 * goes to the next job, admitting only the share of its requests it can serve in time (acceptRate);
 * the rest keep their warm replicas at the floor quota and admit nothing.
 */
import { relaxedMdcLatencyMs } from '../../inference/queueing';
import { cheapestSizing, quotaFor, replicaLatencyMs, type LatencyModel } from './latency';

export interface JobNeed {
  readonly pMs: number;
  /** Latency the model must predict (ms), at the model's percentile. */
  readonly targetMs: number;
  /** Replicas serving now. */
  readonly ready: number;
  /** Replicas held (ready + starting): each holds its quota. */
  readonly held: number;
  /** Rate (req/s) to provision at forecast level z. */
  rate(z: number): number;
  /** The rate expected this minute without the guard's burst allowance (overload is judged on it). */
  readonly mean: number;
  /** Served fully at the last tick (overload hysteresis). */
  readonly served: boolean;
}

export interface AllocParams {
  readonly model: LatencyModel;
  /** Lowest quota a replica is set to. */
  readonly qFloor: number;
  /** Range of the forecast level searched. */
  readonly zMin: number;
  readonly zMax: number;
  /** Lowest level every job is squeezed to before the knapsack is considered. */
  readonly zSqueeze: number;
  /** Overload: the fraction of the CPU the knapsack leaves that goes to the served jobs (the rest to a partly admitted one). */
  readonly spareToServed: number;
  /** The cluster is overloaded when the jobs' mean rates need more than overloadAt · capacity. */
  readonly overloadAt: number;
  /** The knapsack must beat sharing by this much expected utility. */
  readonly knapsackMargin: number;
  /** Forecast level a job must be covered at to count as served in overload. */
  readonly zServe: number;
  /** Cost discount for jobs already served (0..1). */
  readonly stickiness: number;
}

export interface Allocation {
  readonly quotas: number[];
  readonly acceptRates: number[];
  readonly served: boolean[];
  readonly overload: boolean;
  /** Forecast level every served job is covered at. */
  readonly z: number;
}

/** The quota job `j` needs at level z (1 when even a whole CPU per replica misses). */
function quotaAt(p: AllocParams, j: JobNeed, z: number): number {
  if (j.ready < 1) return p.qFloor;
  const q = quotaFor(p.model, j.pMs, j.rate(z), j.ready, j.targetMs, p.qFloor);
  return q === null ? 1 : q;
}

/** Can job j meet its target at level z with its ready replicas? */
function fits(p: AllocParams, j: JobNeed, z: number): boolean {
  return j.ready >= 1 && quotaFor(p.model, j.pMs, j.rate(z), j.ready, j.targetMs, p.qFloor) !== null;
}

function cpuAt(p: AllocParams, jobs: readonly JobNeed[], idx: readonly number[], z: number): number {
  let s = 0;
  for (const i of idx) s += jobs[i].held * quotaAt(p, jobs[i], z);
  return s;
}

/**
 * The CPU every job would take at its mean rate with replica counts of its own choosing: whether the
 * cluster is overloaded (a job short of replicas now is a matter of the plan, not of overload).
 */
function idealCpu(p: AllocParams, jobs: readonly JobNeed[]): number {
  let s = 0;
  for (const j of jobs) {
    const best = cheapestSizing(p.model, j.pMs, j.mean, j.targetMs, p.qFloor, 1000);
    s += best === null ? Infinity : best.cpu;
  }
  return s;
}

/** The largest z in [zMin, zMax] whose CPU fits `cap` for the jobs `idx` (zMin when none does). */
function levelFor(p: AllocParams, jobs: readonly JobNeed[], idx: readonly number[], cap: number, zLo = p.zMin): number {
  if (cpuAt(p, jobs, idx, p.zMax) <= cap) return p.zMax;
  let lo = zLo;
  let hi = p.zMax;
  for (let k = 0; k < 20; k++) {
    const mid = (lo + hi) / 2;
    if (cpuAt(p, jobs, idx, mid) <= cap) lo = mid;
    else hi = mid;
  }
  return lo;
}

/** Scales the quotas of `idx` up (each ≤ 1) until they use `cap`. */
function spread(jobs: readonly JobNeed[], idx: readonly number[], quotas: number[], cap: number): void {
  const used = (f: number): number => idx.reduce((s, i) => s + jobs[i].held * Math.min(1, quotas[i] * f), 0);
  if (idx.length === 0 || used(1) >= cap) return;
  let lo = 1;
  let hi = 1;
  while (used(hi) < cap && hi < 1e6) hi *= 2;
  for (let k = 0; k < 40; k++) {
    const mid = (lo + hi) / 2;
    if (used(mid) <= cap) lo = mid;
    else hi = mid;
  }
  for (const i of idx) quotas[i] = Math.min(1, quotas[i] * lo);
}

/** Every job served, each covered at the same forecast level (the largest the capacity allows, down to zSqueeze). */
function shareAll(p: AllocParams, jobs: readonly JobNeed[], capacity: number): Allocation {
  const all = jobs.map((_, i) => i);
  const z = levelFor(p, jobs, all, capacity, p.zSqueeze);
  const quotas = all.map((i) => quotaAt(p, jobs[i], z));
  const used = jobs.reduce((s, j, i) => s + j.held * quotas[i], 0);
  if (used > capacity) for (const i of all) quotas[i] = Math.max(p.qFloor, (quotas[i] * capacity) / used);
  else spread(jobs, all, quotas, capacity);
  return { quotas, acceptRates: jobs.map(() => 1), served: jobs.map(() => true), overload: false, z };
}

/** The utility the model expects from an allocation at each job's mean rate: min(1, target / latency), 0 at ρ ≥ 1 or when nothing is admitted. */
export function expectedUtility(p: AllocParams, jobs: readonly JobNeed[], a: Allocation): number {
  let u = 0;
  jobs.forEach((j, i) => {
    if (a.acceptRates[i] < 0.99 || j.ready < 1) return;
    const s = j.pMs / a.quotas[i];
    const lam = j.mean;
    if ((lam * s) / 1000 / j.ready >= 1) return;
    u += Math.min(1, j.targetMs / relaxedMdcLatencyMs(p.model.percentile, s, lam, j.ready, p.model.rhoMax));
  });
  return u;
}

/**
 * `lock`: within a minute the choice made at its start is kept (the metric scores whole minutes: a
 * job served for half a minute and dropped for the other half earns nothing for either half); the
 * knapsack then keeps the jobs it serves first in line.
 */
export function allocate(p: AllocParams, jobs: readonly JobNeed[], capacity: number, lock?: 'shared' | 'knapsack'): Allocation {
  const shared = shareAll(p, jobs, capacity);
  if (lock === 'shared') return shared;
  if (lock === 'knapsack') return knapsack(p, jobs, capacity, true);
  if (idealCpu(p, jobs) <= capacity * p.overloadAt) return shared;
  const picked = knapsack(p, jobs, capacity, false);
  return expectedUtility(p, jobs, picked) > expectedUtility(p, jobs, shared) + p.knapsackMargin ? picked : shared;
}

/** Overload: cheapest-first knapsack at level zServe; the rest admit only what the CPU left can serve. */
function knapsack(p: AllocParams, jobs: readonly JobNeed[], capacity: number, keep: boolean): Allocation {
  const all = jobs.map((_, i) => i);
  const quotas = jobs.map(() => p.qFloor);
  const accept = jobs.map(() => 1);
  const floorCpu = jobs.reduce((s, j) => s + j.held * p.qFloor, 0);
  const cost = jobs.map((j) => (fits(p, j, p.zServe) ? j.held * (quotaAt(p, j, p.zServe) - p.qFloor) : Infinity));
  const order = all.filter((i) => Number.isFinite(cost[i])).sort((a, b) => {
    if (keep && jobs[a].served !== jobs[b].served) return jobs[a].served ? -1 : 1;
    const ca = cost[a] * (jobs[a].served ? 1 - p.stickiness : 1);
    const cb = cost[b] * (jobs[b].served ? 1 - p.stickiness : 1);
    return ca - cb || a - b;
  });
  let left = capacity - floorCpu;
  const chosen: number[] = [];
  for (const i of order) {
    if (cost[i] <= left + 1e-9) {
      chosen.push(i);
      left -= cost[i];
    }
  }
  // A share of what is left raises the served jobs' cover; the rest goes to one more job's admitted share.
  const servedCap = chosen.reduce((s, i) => s + jobs[i].held * p.qFloor, 0) + capacity - floorCpu - left + p.spareToServed * left;
  const z = chosen.length > 0 ? levelFor(p, jobs, chosen, servedCap) : p.zServe;
  for (const i of chosen) quotas[i] = quotaAt(p, jobs[i], z);
  const served = jobs.map((_, i) => chosen.includes(i));
  // The CPU left goes to the unserved job that can use it best, admitting what it can serve in time.
  const spare = capacity - jobs.reduce((s, j, i) => s + j.held * quotas[i], 0);
  const rest = all.filter((i) => !served[i] && jobs[i].ready >= 1);
  for (const i of rest) accept[i] = 0;
  let bestI = -1;
  let bestRate = 0;
  let bestQ = p.qFloor;
  for (const i of rest) {
    const j = jobs[i];
    const q = Math.min(1, p.qFloor + spare / j.held);
    const r = servableRate(p.model, j, q);
    if (r > bestRate) {
      bestRate = r;
      bestI = i;
      bestQ = q;
    }
  }
  if (bestI >= 0) {
    quotas[bestI] = bestQ;
    accept[bestI] = Math.min(1, bestRate / Math.max(1e-9, jobs[bestI].rate(0)));
  } else spread(jobs, chosen, quotas, servedCap);
  return { quotas, acceptRates: accept, served, overload: true, z };
}

/** The largest rate (req/s) `ready` replicas at quota q carry within the target (bisection). */
export function servableRate(m: LatencyModel, j: JobNeed, q: number): number {
  if (j.ready < 1 || j.pMs / q > j.targetMs) return 0;
  let lo = 0;
  let hi = (j.ready * q * 1000) / j.pMs;
  for (let k = 0; k < 30; k++) {
    const mid = (lo + hi) / 2;
    if (replicaLatencyMs(m, j.pMs, mid, j.ready, q) <= j.targetMs) lo = mid;
    else hi = mid;
  }
  return lo;
}
