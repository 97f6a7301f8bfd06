/**
 * FaPES schedule planning on the forward-looking board (§5.3). A job's schedule plan is chosen to
 * minimise the RHS of (6): its completion time plus the total price of the GPU-time it holds, where
 * the unit price in a round is H·(U/H)^(load/capacity) (`serverPrice`) at that round's load on the
 * board. Every chosen plan is reserved on the board, so later jobs in priority order see the higher
 * prices and the GPUs released by earlier jobs' predicted completions.
 *
 * Departures from the paper (documented, deliberate):
 *  - One pool, not per-server prices: the board is cluster-wide (free GPUs over time); adding g GPUs
 *    in a round costs Σ_{k<g} price(load + k), i.e. GPUs are taken cheapest first as if servers were
 *    filled in increasing price order. Which GPUs a job gets is left to the placement phase (buddy).
 *  - The price of one GPU for one round is H·(U/H)^(load/capacity) × n · slot ÷ (U · capacity),
 *    n = jobs in the cohort: the paper's price, scaled so that holding the whole cluster for one
 *    round at full load costs what it costs the objective (1) at full load — one round of delay
 *    for each of the n jobs planned — and at zero load H/U of that. Summed literally per GPU-round the
 *    price (seconds of completion time per GPU-round) exceeds most completion-time savings and
 *    jobs do not scale out even on an empty cluster; the scaling keeps the unit (seconds) and the
 *    shape (exponential in load). The paper does not say how its price is normalised.
 *  - Plans have at most two phases instead of the per-round workload DP: `early` GPUs from now
 *    (0 = the job queues, Fig. 3's "wait for better resources") until a start round taken from the
 *    board's releases, then `gpus` until completion. This keeps the DP's main move (Fig. 9: run on
 *    the cheap GPUs now, scale up on the servers that free later; §5.2 (i): "have their jobs running
 *    first, and then scaled up when available resources allow"), so a job no longer has to choose
 *    between queueing for the big allocation and holding a small one to completion.
 */
import { segmentAt, take, type FreeGpuTimeline } from '../free-gpu-timeline';
import type { Seconds } from '../types';
import { serverPrice } from './prices';

/** Bounds of completion times among the jobs being planned (s): U with one worker, H with all. */
export interface PriceBounds {
  readonly upper: Seconds;
  readonly lower: Seconds;
  /** Jobs whose completion times the plans trade off (the cohort); scales the price. Default 1. */
  readonly jobs?: number;
}

/** A job as the planner sees it: remaining work and its (corrected) goodput per worker level. */
export interface PlanJob {
  readonly id: string;
  /** Remaining iterations (at the submitted batch's statistical efficiency). */
  readonly need: number;
  /** Usable worker counts, ascending. */
  readonly levels: readonly number[];
  /** Iterations/s at `gpus` workers (goodput in the job's units, estimation error corrected). */
  readonly rate: (gpus: number) => number;
}

export interface PlanChoice {
  /** When the job starts on `gpus` (s): `now` = this round. */
  readonly start: Seconds;
  /** GPUs held on [now, start) before scaling to `gpus` (0 = it queues). */
  readonly early: number;
  readonly gpus: number;
  /** Predicted completion (s). */
  readonly completion: Seconds;
  /** Total price of the GPU-time held (s). */
  readonly price: number;
  /** (completion − now) + price: the quantity minimised. */
  readonly objective: number;
}

/** Fewest free GPUs on the board over [from, to). */
export function minFree(b: FreeGpuTimeline, from: Seconds, to: Seconds): number {
  let i = segmentAt(b, from);
  let m = b.free[i];
  for (i++; i < b.times.length && b.times[i] < to; i++) m = Math.min(m, b.free[i]);
  return m;
}

/** Σ_{k<g} price(load + k) over the GPUs added at load `load` (closed form of the geometric sum). */
function addPrice(load: number, g: number, cap: number, bounds: PriceBounds): number {
  const r = bounds.upper / bounds.lower;
  if (r <= 1 + 1e-12) return bounds.lower * g;
  const q = Math.pow(r, 1 / cap);
  return (serverPrice(load, cap, bounds.upper, bounds.lower) * (Math.pow(q, g) - 1)) / (q - 1);
}

/**
 * Price (s) of holding `g` more GPUs on [from, to) on board `b`: Σ over board segments of
 * (duration ÷ slot) rounds × the added GPUs' prices, scaled by n · slot ÷ (U · capacity) (module note).
 */
export function holdPrice(b: FreeGpuTimeline, from: Seconds, to: Seconds, g: number, slot: Seconds, bounds: PriceBounds): number {
  if (g <= 0 || to <= from) return 0;
  const cap = b.capacity;
  let p = 0;
  for (let i = segmentAt(b, from); i < b.times.length && b.times[i] < to; i++) {
    const s = Math.max(from, b.times[i]);
    const e = Math.min(to, i + 1 < b.times.length ? b.times[i + 1] : Infinity);
    p += ((e - s) / slot) * addPrice(cap - b.free[i], g, cap, bounds);
  }
  return (p * slot * (bounds.jobs ?? 1)) / (bounds.upper * cap);
}

/** Start times worth trying: now and the first slot-aligned times at which the board frees GPUs. */
export function candidateStarts(b: FreeGpuTimeline, now: Seconds, slot: Seconds, max: number): Seconds[] {
  const out = [now];
  const at = (i: number) => now + Math.ceil((b.times[i] - now) / slot - 1e-9) * slot;
  for (let i = 1; i < b.times.length && out.length < max - 1; i++) {
    if (b.free[i] <= b.free[i - 1]) continue;
    if (at(i) > out[out.length - 1]) out.push(at(i));
  }
  // Always try the start of the board's last segment (everything planned so far is done).
  const last = b.times.length - 1;
  if (last > 0 && at(last) > out[out.length - 1]) out.push(at(last));
  return out;
}

/**
 * The job's cheapest plan on the board: min over (early GPUs now, start round, GPUs from then on)
 * of completion + price. `early` ranges over 0 and the levels free on [now, start).
 */
export function bestPlan(b: FreeGpuTimeline, job: PlanJob, now: Seconds, slot: Seconds, bounds: PriceBounds, maxStarts = 6): PlanChoice | undefined {
  let best: PlanChoice | undefined;
  const consider = (c: PlanChoice) => {
    if (!best || c.objective < best.objective - 1e-9 || (Math.abs(c.objective - best.objective) <= 1e-9 && c.start < best.start)) best = c;
  };
  for (const start of candidateStarts(b, now, slot, maxStarts)) {
    const freeBefore = start > now ? minFree(b, now, start) : 0;
    const earlies = start > now ? [0, ...job.levels.filter((e) => e <= freeBefore && job.rate(e) > 0)] : [0];
    for (const e of earlies) {
      const doneEarly = e > 0 ? job.rate(e) * (start - now) : 0;
      if (doneEarly >= job.need) continue; // finishes on `e` alone: that is the start-now plan
      const earlyPrice = holdPrice(b, now, start, e, slot, bounds);
      for (const g of job.levels) {
        const rate = job.rate(g);
        if (!(rate > 0)) continue;
        const completion = start + (job.need - doneEarly) / rate;
        if (minFree(b, start, completion) < g) continue;
        const price = earlyPrice + holdPrice(b, start, completion, g, slot, bounds);
        consider({ start, early: e, gpus: g, completion, price, objective: completion - now + price });
      }
    }
  }
  return best;
}

/** The chosen plan as steps (absolute times). */
export function choiceSteps(c: PlanChoice, now: Seconds): { from: Seconds; gpus: number }[] {
  if (c.start <= now) return [{ from: now, gpus: c.gpus }];
  return [
    { from: now, gpus: c.early },
    { from: c.start, gpus: c.gpus },
  ];
}

/** Reserves a chosen plan on the board (FaPES-Board collects it). */
export function reserveChoice(b: FreeGpuTimeline, c: PlanChoice): void {
  if (c.early > 0) take(b, b.now, c.start, c.early);
  take(b, c.start, c.completion, c.gpus);
}

/**
 * U and H from the jobs being planned (§5.3: "allocating one GPU and all GPUs to jobs in advance"):
 * U = longest completion at the smallest level, H = shortest completion at the largest (≥ 1 s).
 */
export function priceBounds(jobs: readonly PlanJob[]): PriceBounds {
  let upper = 1;
  let lower = Infinity;
  for (const j of jobs) {
    if (j.levels.length === 0) continue;
    const lo = j.rate(j.levels[0]);
    const hi = Math.max(...j.levels.map((g) => j.rate(g)));
    if (lo > 0) upper = Math.max(upper, j.need / lo);
    if (hi > 0) lower = Math.min(lower, j.need / hi);
  }
  lower = Math.max(1, Number.isFinite(lower) ? lower : 1);
  return { upper: Math.max(upper, lower), lower, jobs: Math.max(1, jobs.length) };
}

/**
 * U and H as the cohort's makespans (§5.3: "allocating one GPU and all GPUs to jobs in advance and
 * predicting the corresponding makespan"): U = makespan with one worker (smallest level) per job,
 * all running side by side; H = makespan with all `capacity` GPUs given to the cohort, bounded below
 * by its longest job at its best level and by its GPU-work at each job's best level ÷ capacity.
 */
export function makespanBounds(jobs: readonly PlanJob[], capacity: number): PriceBounds {
  let upper = 1;
  let longest = 0;
  let work = 0;
  for (const j of jobs) {
    if (j.levels.length === 0) continue;
    const lo = j.rate(j.levels[0]);
    if (lo > 0) upper = Math.max(upper, j.need / lo);
    let bestG = j.levels[0];
    for (const g of j.levels) if (j.rate(g) > j.rate(bestG)) bestG = g;
    const hi = j.rate(bestG);
    if (hi > 0) {
      longest = Math.max(longest, j.need / hi);
      work += (j.need / hi) * bestG;
    }
  }
  const lower = Math.max(1, longest, work / Math.max(1, capacity));
  return { upper: Math.max(upper, lower), lower, jobs: Math.max(1, jobs.length) };
}
