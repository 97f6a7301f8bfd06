/**
 * One scheduling event of the authors' ElasticFlow artifact (`ef_sim_jobs_access_control`):
 * `estimate_all_jobs` plans every job in deadline order on a fresh board (`planJob`), and
 * `allocate_free_gpus` hands the GPUs left now, one level at a time, to the job whose next level
 * has the largest marginal GPU time (GPU-seconds of its plan with one more level now, minus
 * those of its current plan, per added GPU; a job holding 0 GPUs comes first). Jobs with equal
 * keys keep their order (Python's stable sort), which starts as deadline order.
 */
import { levelsOf, remainingIterations, throughputAt } from '../../training/curve';
import type { Seconds, TrainingJob } from '../../training/types';
import { allocationTime, mergeMap, nextLevelOf, planJob, type ArtifactJob, type ArtifactPlan, type FreeMap } from './plan';

/** A best-effort job's deadline for the planner: far enough never to bind. */
const NO_DEADLINE = 1e12;
/** Python's `sys.maxsize`. */
const MAXSIZE = 9223372036854775807;

export function toArtifactJob(job: TrainingJob): ArtifactJob {
  return {
    iterLeft: remainingIterations(job),
    ddl: job.deadline ?? NO_DEADLINE,
    levels: levelsOf(job, Infinity),
    maxGpu: job.maxGpus,
    thr: (g) => throughputAt(job.curve, g),
  };
}

/** A job's state during one event. */
interface Entry {
  readonly job: TrainingJob;
  readonly aj: ArtifactJob;
  plan: ArtifactPlan;
  gpus: number;
  next: number;
  marginal: number;
  probe?: ArtifactPlan;
}

export interface EstimateResult {
  /** Every job's realEnd ≤ deadline. */
  readonly ok: boolean;
  /** Jobs whose plan misses the deadline, in deadline order. */
  readonly late: string[];
  readonly plans: Map<string, ArtifactPlan>;
  readonly board: FreeMap;
}

/** EDF order as the artifact sorts (by deadline; Python's sort keeps ties in list order). */
export function byDdl(jobs: readonly TrainingJob[]): TrainingJob[] {
  return [...jobs].sort((a, b) => (a.deadline ?? NO_DEADLINE) - (b.deadline ?? NO_DEADLINE));
}

/** `estimate_all_jobs`: plans every job with work left, in deadline order, on a fresh board. */
export function estimateAll(jobs: readonly TrainingJob[], now: Seconds, slot: Seconds, cap: number): EstimateResult {
  let board: FreeMap = new Map([[now, cap]]);
  const plans = new Map<string, ArtifactPlan>();
  const late: string[] = [];
  for (const job of byDdl(jobs)) {
    if (remainingIterations(job) <= 0 || levelsOf(job, cap).length === 0) continue;
    const plan = planJob(toArtifactJob(job), now, board, slot, cap);
    board = plan.board;
    plans.set(job.id, plan);
    if (!plan.ok) late.push(job.id);
  }
  return { ok: late.length === 0, late, plans, board };
}

/**
 * The board with `e`'s reservations handed back (`get_marginal`'s `tmp_future_free_gpus`): its end
 * and its allocation times become keys (with the free count in force there), and every key before
 * its end gets back the GPUs the job holds there.
 */
function without(board: FreeMap, e: Entry, cap: number): FreeMap {
  const end = e.plan.end;
  const keys: number[] = [];
  const free: number[] = [];
  for (const [t, f] of board) {
    keys.push(t);
    free.push(f);
  }
  const insert = (t: number) => {
    let lo = 0;
    let hi = keys.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (keys[mid] < t) lo = mid + 1;
      else hi = mid;
    }
    if (keys[lo] === t) return;
    keys.splice(lo, 0, t);
    free.splice(lo, 0, lo > 0 ? free[lo - 1] : cap);
  };
  insert(end);
  const allocs = [...e.plan.allocations];
  for (const [a] of allocs) insert(a);
  const out: FreeMap = new Map();
  let j = -1;
  for (let i = 0; i < keys.length; i++) {
    const t = keys[i];
    while (j + 1 < allocs.length && allocs[j + 1][0] <= t) j++;
    out.set(t, t < end && j >= 0 ? free[i] + allocs[j][1] : free[i]);
  }
  return mergeMap(out);
}

function probe(e: Entry, board: FreeMap, allocatable: number, now: Seconds, slot: Seconds, cap: number): void {
  if (e.next - e.gpus > allocatable || e.next === e.gpus) {
    e.marginal = -MAXSIZE;
    return;
  }
  const p = planJob(e.aj, now, without(board, e, cap), slot, cap, e.next);
  e.probe = p;
  e.marginal = e.gpus === 0 ? MAXSIZE : (p.gpuTime - allocTime(e.plan)) / (e.next - e.gpus);
}

const allocTime = (p: ArtifactPlan) => allocationTime(p.allocations, p.end);

export interface ArtifactRound {
  /** jobId → GPUs now. */
  readonly gpus: Map<string, number>;
  readonly plans: Map<string, ArtifactPlan>;
  readonly late: string[];
  /** The first planned change after now (`first_scale_event_time`). */
  readonly nextChange?: Seconds;
}

/** One event's allocation: estimate, then `allocate_free_gpus`. */
export function artifactRound(jobs: readonly TrainingJob[], now: Seconds, slot: Seconds, cap: number): ArtifactRound {
  const est = estimateAll(jobs, now, slot, cap);
  let board = est.board;
  const entries: Entry[] = [];
  for (const job of byDdl(jobs)) {
    const plan = est.plans.get(job.id);
    if (!plan) continue;
    const aj = toArtifactJob(job);
    const gpus = plan.allocations.get(now) ?? 0;
    entries.push({ job, aj, plan, gpus, next: nextLevelOf(aj, gpus), marginal: 0 });
  }
  let allocatable = cap - entries.reduce((a, e) => a + e.gpus, 0);
  if (allocatable > 0) {
    for (const e of entries) probe(e, board, allocatable, now, slot, cap);
    entries.sort((a, b) => b.marginal - a.marginal);
    let moved = true;
    while (allocatable > 0 && moved) {
      moved = false;
      for (const e of entries) {
        if (e.next - e.gpus > allocatable || e.next === e.gpus) continue;
        const p = e.probe!;
        board = p.board;
        allocatable -= e.next - e.gpus;
        e.plan = p;
        e.gpus = e.next;
        e.next = nextLevelOf(e.aj, e.gpus);
        moved = true;
        break;
      }
      for (const e of entries) if (e.next - e.gpus > 0) probe(e, board, allocatable, now, slot, cap);
      entries.sort((a, b) => b.marginal - a.marginal);
    }
  }
  const gpus = new Map<string, number>();
  const plans = new Map<string, ArtifactPlan>();
  let nextChange = Infinity;
  for (const e of entries) {
    gpus.set(e.job.id, e.gpus);
    plans.set(e.job.id, e.plan);
    for (const t of [...e.plan.allocations.keys()].sort((a, b) => a - b)) {
      if (t > now) {
        nextChange = Math.min(nextChange, t);
        break;
      }
    }
  }
  return { gpus, plans, late: est.late, nextChange: Number.isFinite(nextChange) ? nextChange : undefined };
}
