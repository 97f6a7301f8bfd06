/**
 * The `fapes` policy (FaPES-Scheduler, SoCC'24 §5) composed from the tested pieces in this folder:
 *  1. estimation-error correction: the ratio of reported to predicted progress since the last round
 *     (`correction.ts`) scales every job's modelled goodput;
 *  2. filtering of running jobs (`filterRunning`): jobs finishing within the next round are kept,
 *     the others are recycled in increasing order of performance achievement while the estimated
 *     average achievement of the cohort rises;
 *  3. priorities (`prioritize`): waiting jobs first by queueing time, recycled running jobs by
 *     achievement, a job waiting ≥ 3 rounds pops up to the top;
 *  4. schedule plans on the forward board priced by H·(U/H)^(load/capacity) (`schedule.ts`), in
 *     priority order, each reserved for the following jobs; U and H are the cohort's makespans on one
 *     GPU per job and on all GPUs (`makespanBounds`). Plans have two phases (GPUs free now, then a
 *     scale-up when the board frees more); kept running jobs follow their stored plans;
 *  4b. work conservation: GPUs no plan uses this round go to queued jobs, then by marginal return;
 *  5. goodput: the rate of a job is its goodput in its own units. With `adaptsBatch` the caller
 *     passes the curve with the batch co-adapted (`coAdapt`, linear LR scaling), as the simulator does.
 *
 * FaPES itself has no deadlines. Jobs with a hard deadline keep ElasticFlow's guarantee: admission
 * is ElasticFlow's (Algorithm 1), and every round their minimum satisfactory shares are reserved on
 * the board first (the EDF pass); GPUs idle this round after FaPES planning go to them by marginal
 * return (Algorithm 2). Deadline jobs that can no longer be met are planned as best-effort jobs.
 *
 * `fapesRound` is pure (state + memory in, decision + memory out); `fapesPolicy()` threads the
 * memory between calls. A policy built afresh each round (the live service) has no memory and runs
 * uncorrected (factor 1).
 */
import { freeAt, reserve } from '../free-gpu-timeline';
import { fitLevel, levelsOf, remainingIterations, throughputAt } from '../curve';
import { mlfaasAdmission } from '../mlfaas/admission';
import { marginalReturn } from '../mlfaas/allocation';
import { capacityOf, edfPass, type ElasticFlowOptions } from '../mlfaas/edf-pass';
import { greedyFill } from '../marginal';
import { buddyPlacement } from '../placement/buddy';
import type { Plan, PlanStep, RoundDecision, SchedulerState, Seconds, TrainingJob, TrainingPolicy } from '../types';
import { correct, NO_CORRECTION, type Correction } from './correction';
import { filterRunning, POP_UP_ROUNDS, prioritize, type CohortJob } from './priority';
import { bestPlan, choiceSteps, makespanBounds, minFree, priceBounds, reserveChoice, type PlanJob } from './schedule';

/** What the policy remembers between rounds: last decision per job, for the error correction. */
export interface FapesMemory {
  readonly last: Readonly<Record<string, { readonly t: Seconds; readonly done: number; readonly rate: number }>>;
  readonly corrections: Readonly<Record<string, Correction>>;
  /**
   * Each best-effort job's schedule plan (absolute steps, without this round's work-conserving
   * extras): a running job that filtering keeps follows its plan (e.g. the scale-up it was
   * planned to make when GPUs free), as FaPES-Board does, instead of freezing its current size.
   */
  readonly plans?: Readonly<Record<string, readonly PlanStep[]>>;
}

export const EMPTY_MEMORY: FapesMemory = { last: {}, corrections: {} };

/** GPUs a plan gives at time t (the step in effect). */
export function stepAt(steps: readonly PlanStep[], t: Seconds): number {
  let g = 0;
  for (const s of steps) if (s.from <= t + 1e-9) g = s.gpus;
  return g;
}

/**
 * A kept job's plan from `now` on, and its completion for `need` remaining iterations at `rate`:
 * the step in effect now plus later steps; the last step runs until the work is done.
 */
export function followPlan(steps: readonly PlanStep[], now: Seconds, need: number, rate: (g: number) => number): { steps: PlanStep[]; completion: Seconds } {
  const out: PlanStep[] = [{ from: now, gpus: stepAt(steps, now) }];
  for (const s of steps) if (s.from > now + 1e-9) out.push({ from: s.from, gpus: s.gpus });
  let left = need;
  for (let k = 0; k < out.length; k++) {
    const r = rate(out[k].gpus);
    const end = k + 1 < out.length ? out[k + 1].from : Infinity;
    if (r > 0 && left / r <= end - out[k].from) return { steps: out.slice(0, k + 1), completion: out[k].from + left / r };
    if (r > 0) left -= r * (end - out[k].from);
  }
  return { steps: out, completion: Infinity };
}

export interface FapesOptions {
  /** Rounds a waiting job waits before it pops up (3 in the paper). */
  readonly popUpRounds?: number;
  /** Start times tried per plan (now + the next board releases). */
  readonly maxStarts?: number;
  /** Bounds on the correction factor applied to modelled goodput. */
  readonly minFactor?: number;
  readonly maxFactor?: number;
  /** Options of the ElasticFlow pass used for deadline jobs. */
  readonly elasticFlow?: ElasticFlowOptions;
  /**
   * Work conservation (default on): GPUs that no plan uses this round go first to queued jobs
   * (one smallest level each, in priority order), then to any job by marginal goodput gain; the
   * extras are for this round only and are not written into plans on the board.
   */
  readonly workConserving?: boolean;
  /**
   * How U and H of the price H·(U/H)^(load/capacity) are obtained. 'makespan' (default, §5.3:
   * "allocating one GPU and all GPUs to jobs in advance and predicting the corresponding
   * makespan"): cohort makespans (`makespanBounds`). 'jobs': the longest single-job completion on
   * one GPU and the shortest on all GPUs (the first implementation): U/H then spans the job-size
   * spread (10^4 and more), prices stay near zero until the board is almost full, and the first
   * jobs in priority order take their largest sizes while the rest queue.
   */
  readonly priceBounds?: 'makespan' | 'jobs';
}

interface Info {
  job: TrainingJob;
  levels: number[];
  factor: number;
  cur: number;
  best: number;
  rate: (g: number) => number;
}

const rateOf = (i: Info, g: number) => throughputAt(i.job.curve, g) * i.factor;

/** One FaPES round: GPUs per job for the coming round, plans, reasons, and the next memory. */
export function fapesRound(
  state: SchedulerState,
  now: Seconds,
  memory: FapesMemory = EMPTY_MEMORY,
  opts: FapesOptions = {},
): { decision: RoundDecision; memory: FapesMemory } {
  const cap = capacityOf(state);
  const slot = state.slotSeconds;
  const [fMin, fMax] = [opts.minFactor ?? 0.25, opts.maxFactor ?? 1.5];
  const corrections: Record<string, Correction> = {};
  const infos: Info[] = [];
  for (const job of state.jobs) {
    const levels = levelsOf(job, cap);
    if (remainingIterations(job) <= 0 || levels.length === 0) continue;
    // 1. estimation-error correction from reported progress since the last decision
    let c = memory.corrections[job.id] ?? NO_CORRECTION;
    const last = memory.last[job.id];
    if (last && now > last.t && last.rate > 0) c = correct(c, last.rate * (now - last.t), job.doneIterations - last.done);
    corrections[job.id] = c;
    const info: Info = { job, levels, factor: Math.min(fMax, Math.max(fMin, c.factor)), cur: 0, best: 0, rate: () => 0 };
    info.rate = (g) => rateOf(info, g);
    const cur = levels.includes(job.currentGpus ?? 0) ? (job.currentGpus ?? 0) : 0;
    // A running job's size is what its plan gives now (last round's work-conserving extras are
    // not part of the plan); with no stored plan (fresh instance) it is its current size.
    const stored = memory.plans?.[job.id];
    info.cur = cur > 0 && stored ? fitLevel(levels, stepAt(stored, now)) : cur;
    info.best = Math.max(...levels.map(info.rate));
    infos.push(info);
  }
  const gpus: Record<string, number> = {};
  const reasons: Record<string, string> = {};
  const plans: Record<string, Plan> = {};

  // Deadline jobs: ElasticFlow's minimum satisfactory shares are reserved on the board first.
  const pass = edfPass(infos.map((i) => i.job), state, now, opts.elasticFlow ?? {});
  const board = pass.board;
  const guaranteed = infos.filter((i) => pass.plans.has(i.job.id));
  for (const i of guaranteed) {
    const plan = pass.plans.get(i.job.id)!;
    plans[i.job.id] = plan;
    const first = plan.steps[0];
    gpus[i.job.id] = first && first.from <= now ? first.gpus : 0;
    reasons[i.job.id] = `deadline ${i.job.deadline}: ElasticFlow minimum share ${gpus[i.job.id]} GPUs`;
  }
  const others = infos.filter((i) => !pass.plans.has(i.job.id));
  const achievement = (i: Info, g: number) => (i.best > 0 ? i.rate(g) / i.best : 0);
  const remainingSeconds = (i: Info, g: number) => (i.rate(g) > 0 ? remainingIterations(i.job) / i.rate(g) : Infinity);
  const cohortJob = (i: Info): CohortJob => {
    const waiting = i.cur > 0 ? 0 : Math.max(1, i.job.waitingRounds ?? 1);
    const started = (i.job.attainedGpuSeconds ?? 0) > 0;
    return {
      id: i.job.id,
      waitingRounds: waiting,
      queueingSeconds: i.cur > 0 ? 0 : started ? waiting * slot : now - i.job.submitTime,
      achievement: achievement(i, i.cur),
      remainingSeconds: remainingSeconds(i, i.cur),
    };
  };
  const byId = new Map(others.map((i) => [i.job.id, i]));
  const running = others.filter((i) => i.cur > 0);
  const waiting = others.filter((i) => i.cur === 0);

  // 2. filtering: recycle running jobs while the cohort's estimated average achievement rises.
  const freeNow = Math.max(0, freeAt(board, now) - running.reduce((s, i) => s + i.cur, 0));
  const estimate = (recycled: readonly CohortJob[]) => {
    const members = [...waiting, ...recycled.map((c) => byId.get(c.id)!)];
    const pool = freeNow + recycled.reduce((s, c) => s + byId.get(c.id)!.cur, 0);
    // Even split with the remainder spread one GPU at a time (waiting jobs first), each share
    // rounded down to a usable level.
    const n = Math.max(1, members.length);
    const base = Math.floor(pool / n);
    const extra = pool - base * members.length;
    return members.reduce((s, i, k) => s + achievement(i, fitLevel(i.levels, base + (k < extra ? 1 : 0))), 0) / n;
  };
  const recycled = new Set(filterRunning(running.map(cohortJob), slot, estimate, waiting.map((i) => ({ ...cohortJob(i), achievement: 0 }))).map((c) => c.id));
  // Kept jobs hold their GPUs until their (corrected) predicted completion; if the board cannot
  // hold them (deadline shares grew, capacity shrank) they join the cohort too.
  const kept = running.filter((i) => !recycled.has(i.job.id)).sort((a, b) => achievement(b, b.cur) - achievement(a, a.cur));
  const forced = new Set<string>();
  const nextPlans: Record<string, PlanStep[]> = {};
  for (const i of kept) {
    const stored = memory.plans?.[i.job.id] ?? [{ from: now, gpus: i.cur }];
    const f = followPlan(stored, now, remainingIterations(i.job), i.rate);
    const fits = Number.isFinite(f.completion) &&
      f.steps.every((st, k) => minFree(board, st.from, k + 1 < f.steps.length ? f.steps[k + 1].from : f.completion) >= st.gpus);
    if (!fits) {
      forced.add(i.job.id);
      continue;
    }
    reserve(board, f.steps, f.completion);
    const end = f.completion;
    gpus[i.job.id] = i.cur;
    nextPlans[i.job.id] = f.steps;
    plans[i.job.id] = { jobId: i.job.id, slotSeconds: slot, steps: f.steps, predictedCompletion: end };
    reasons[i.job.id] = `kept ${i.cur} GPUs (achievement ${achievement(i, i.cur).toFixed(2)}, correction ×${i.factor.toFixed(2)})`;
  }

  // 3. priorities, 4. plans on the priced forward board, in priority order.
  const cohort = others.filter((i) => i.cur === 0 || recycled.has(i.job.id) || forced.has(i.job.id));
  const ordered = prioritize(cohort.map(cohortJob), opts.popUpRounds ?? POP_UP_ROUNDS);
  const planJobs = new Map<string, PlanJob>(
    cohort.map((i) => [i.job.id, { id: i.job.id, need: remainingIterations(i.job), levels: i.levels, rate: i.rate }]),
  );
  const bounds = (opts.priceBounds ?? 'makespan') === 'makespan' ? makespanBounds([...planJobs.values()], cap) : priceBounds([...planJobs.values()]);
  let nextDecisionAt = Infinity;
  for (const c of ordered) {
    const i = byId.get(c.id)!;
    const choice = bestPlan(board, planJobs.get(c.id)!, now, slot, bounds, opts.maxStarts ?? 6);
    const tag = c.waitingRounds >= (opts.popUpRounds ?? POP_UP_ROUNDS) ? 'popped up, ' : '';
    if (!choice) {
      gpus[c.id] = 0;
      reasons[c.id] = `${tag}no plan fits the board: waits`;
      continue;
    }
    reserveChoice(board, choice);
    const starts = choice.start <= now;
    const steps = choiceSteps(choice, now);
    gpus[c.id] = steps[0].gpus;
    nextPlans[c.id] = steps;
    plans[c.id] = { jobId: c.id, slotSeconds: slot, steps, predictedCompletion: choice.completion };
    const what = i.cur > 0 ? `rescheduled ${i.cur}→${choice.gpus}` : `${choice.gpus} GPUs`;
    const early = !starts && choice.early > 0 ? `${choice.early} GPUs now, ` : '';
    reasons[c.id] =
      `${tag}${early}${what} from ${starts ? 'now' : `t=${choice.start}`}, goodput ${i.rate(choice.gpus).toFixed(2)} it/s ` +
      `(achievement ${achievement(i, choice.gpus).toFixed(2)}), completion ${Math.ceil(choice.completion)}, price ${choice.price.toFixed(0)} s`;
  }

  // Plan steps in the future are decision points (scale-ups, planned starts).
  for (const p of Object.values(plans)) for (const st of p.steps) if (st.from > now) nextDecisionAt = Math.min(nextDecisionAt, st.from);

  // Left-over GPUs this round. Deadline jobs' marginal-return fill is ElasticFlow's (Algorithm 2);
  // with work conservation every job takes part: queued jobs first get one smallest level each in
  // FaPES priority order, then GPUs go by marginal return. Extras last this round only.
  const used = Object.values(gpus).reduce((a, b) => a + b, 0);
  let spare = Math.max(0, Math.min(cap - used, freeAt(board, now)));
  const before = { ...gpus };
  if (opts.workConserving ?? true) {
    for (const c of ordered) {
      if ((gpus[c.id] ?? 0) > 0) continue;
      const first = byId.get(c.id)!.levels[0];
      if (first === undefined || first > spare) continue;
      gpus[c.id] = first;
      spare -= first;
    }
    const rank = new Map(ordered.map((c, k) => [c.id, k]));
    const fillJobs = [...guaranteed, ...others].map((i) => i.job);
    const used2 = Object.values(gpus).reduce((a, b) => a + b, 0);
    greedyFill(fillJobs, gpus, Math.max(0, Math.min(spare, cap - used2)), cap, marginalReturn, (j) =>
      j.deadline !== undefined && pass.plans.has(j.id) ? j.deadline * 1e-12 - 1e9 : (rank.get(j.id) ?? ordered.length) + j.submitTime * 1e-12,
    );
  } else {
    greedyFill(guaranteed.map((i) => i.job), gpus, cap - used, cap, marginalReturn, (j) => (j.deadline ?? Infinity) + j.submitTime * 1e-9);
  }
  for (const i of infos) {
    const d = (gpus[i.job.id] ?? 0) - (before[i.job.id] ?? 0);
    if (d > 0) reasons[i.job.id] = `${reasons[i.job.id] ?? ''}, +${d} idle GPUs this round (work conservation, marginal return)`;
  }

  const last: Record<string, { t: Seconds; done: number; rate: number }> = {};
  for (const i of infos) {
    const g = gpus[i.job.id] ?? 0;
    if (g > 0) last[i.job.id] = { t: now, done: i.job.doneIterations, rate: throughputAt(i.job.curve, g) };
  }
  const total = Object.values(gpus).reduce((a, b) => a + b, 0);
  return {
    decision: {
      gpus,
      plans,
      reasons,
      reason:
        `fapes: ${guaranteed.length} deadline jobs on minimum shares, ${kept.length - forced.size} running kept, ` +
        `cohort ${cohort.length} (${recycled.size} recycled, ${forced.size} forced), ${total}/${cap} GPUs`,
      nextDecisionAt: Number.isFinite(nextDecisionAt) ? nextDecisionAt : undefined,
    },
    memory: { last, corrections, plans: nextPlans },
  };
}

/** The registered `fapes` policy; each instance keeps its own memory (one per simulation or service). */
export function fapesPolicy(opts: FapesOptions = {}): TrainingPolicy {
  let memory = EMPTY_MEMORY;
  return {
    name: 'fapes',
    description:
      'FaPES: filtering of running jobs, priorities with pop-up after 3 rounds, two-phase plans (run now, scale up when the board frees ' +
      'GPUs) priced H·(U/H)^(load/cap) with U, H the cohort makespans, kept jobs follow their plans, idle GPUs filled by marginal return, ' +
      'goodput with batch co-adaptation, progress-based error correction; deadline jobs keep ElasticFlow admission and minimum shares',
    elastic: true,
    adaptsBatch: true,
    admission: mlfaasAdmission(opts.elasticFlow ?? {}),
    allocation: {
      allocate: (state, now) => {
        const r = fapesRound(state, now, memory, opts);
        memory = r.memory;
        return r.decision;
      },
    },
    placement: buddyPlacement,
  };
}
