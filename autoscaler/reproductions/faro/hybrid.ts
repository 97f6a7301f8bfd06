import type { ClusterController, ClusterView, ControllerDecision, JobAllocation, MinutePredictor } from '../../multitenant/types';
import { isScaling } from '../../sim/faro/view';
import { forecastOrNull } from '../../multitenant/predictors';

/**
 * The artifact's autoscale controller bookkeeping (src/autoscaler.py `check_action`,
 * `sort_actions_by_delta`; src/simulation/controller.py `execute_actions`), ported in our words, and
 * Faro's hybrid autoscaler built on it.
 */

/** An action as a policy emits it: a target, a delta or a factor, and how many ticks it may wait. */
export interface FaroAction {
  readonly job: number;
  readonly target?: number;
  readonly delta?: number;
  readonly factor?: number;
  readonly acceptRate?: number;
  trials: number;
}

/** The replica count an action asks for, clamped to [min, max] (`calculate_num_replicas`). */
export function actionReplicas(a: FaroAction, current: number, min: number, max: number): number {
  let delta: number;
  if (a.factor !== undefined) delta = Math.ceil(current * a.factor - 1e-12) - current;
  else if (a.target !== undefined) delta = a.target - current;
  else delta = a.delta ?? 0;
  return Math.min(Math.max(min, current + delta), max);
}

/**
 * The controller's own view of the cluster (`State`): replicas per job as it last asked for them and
 * the units it believes free (the cluster less the pods at the start, then less what it asked for).
 * Upscales are capped by the free units; what does not fit is retried on the next ticks while the
 * action has trials left. Actions for a job whose executor is still busy wait (trials − 1).
 */
export class ActionBook {
  private pending: FaroAction[] = [];
  replicas: number[] = [];
  free = 0;
  private started = false;

  constructor(readonly minReplicas = 1, readonly maxReplicas = 100) {}

  /** Initialises from the first view (the artifact builds its state when the controller starts). */
  init(view: ClusterView): void {
    if (this.started) return;
    this.started = true;
    this.replicas = view.jobs.map((j) => j.replicas);
    this.free = view.capacity - view.jobs.reduce((s, j) => s + Math.max(1, j.replicas) * j.quota, 0);
  }

  /** Adds this tick's actions to the waiting ones and returns what goes to the executors. */
  execute(view: ClusterView, actions: readonly FaroAction[]): Array<JobAllocation | null> {
    this.init(view);
    const all = [...this.pending, ...actions];
    const keyed = all.map((a, i) => ({ a, i, up: actionReplicas(a, this.replicas[a.job], this.minReplicas, this.maxReplicas) >= this.replicas[a.job] }));
    keyed.sort((x, y) => Number(x.up) - Number(y.up) || x.i - y.i);
    const out: Array<JobAllocation | null> = view.jobs.map(() => null);
    const keep: FaroAction[] = [];
    for (const { a } of keyed) {
      if (isScaling(view.jobs[a.job])) {
        a.trials -= 1;
        if (a.trials > 0) keep.push(a);
        continue;
      }
      const cur = this.replicas[a.job];
      let delta = actionReplicas(a, cur, this.minReplicas, this.maxReplicas) - cur;
      if (delta > 0) {
        const remained = this.free - delta;
        if (remained < 0) {
          delta += remained;
          if (a.trials > 1) keep.push({ job: a.job, delta: -remained, acceptRate: a.acceptRate, trials: a.trials - 1 });
        }
      }
      if (delta !== 0 || a.acceptRate !== undefined) {
        const target = cur + delta;
        this.replicas[a.job] = target;
        this.free -= delta;
        const prev = out[a.job];
        out[a.job] = { replicas: target, acceptRate: a.acceptRate ?? prev?.acceptRate };
      }
    }
    this.pending = keep;
    return out;
  }
}

/**
 * The artifact's threshold counter (`BasePolicy.upscale/downscale`): over the target adds to an up
 * count, under it to a down count; reaching `up` (3 ticks) or `down` (60 ticks) fires and resets.
 * With `neverDown` (the hybrid's short-term "ai" policy) a tick under the target changes nothing.
 */
export class ThresholdCounter {
  private counts: number[] = [];

  constructor(readonly up: number, readonly down: number, readonly neverDown: boolean) {}

  /** +1: fire an upscale, −1: fire a downscale, 0: nothing. */
  observe(job: number, over: boolean): -1 | 0 | 1 {
    let c = this.counts[job] ?? 0;
    let fire: -1 | 0 | 1 = 0;
    if (over) {
      c = c < 0 ? 1 : c + 1;
      if (c >= this.up) {
        fire = 1;
        c = 0;
      }
    } else {
      if (this.neverDown) return 0;
      c = c > 0 ? -1 : c - 1;
      if (-c >= this.down) {
        fire = -1;
        c = 0;
      }
    }
    this.counts[job] = c;
    return fire;
  }

  clear(): void {
    this.counts = [];
  }
}

/** The artifact's latency metric: mean latency of the last 30 s, 0 when nothing finished. */
export function avgLatencyMetric(mean: number): number {
  return Number.isNaN(mean) ? 0 : mean;
}

/** A long-term (predictive) policy: per job a target and optionally an accept rate, or null to leave it. */
export interface LongTermPolicy {
  readonly name: string;
  plan(view: ClusterView, book: ActionBook): Array<{ target: number; acceptRate?: number } | null>;
}

/**
 * The next counts the artifact's predictive policies use (src/policy.py
 * `BasePredictionPolicy.calculate_estimate`, "Not available next num inputs. Use current input
 * rate."): the forecast, or where the forecaster answers None (too little history, or an oracle past
 * the trace's end) the current input-rate metric, i.e. the per-minute arrivals since the previous
 * long-term run: the hybrid controller clears the arrival store on every run of policy 0
 * (src/simulation/controller.py `generate_metrics(i == 0)`), and `TimeMetricStore.hist` bins 60 s
 * back from now to the first arrival since then; no arrival → no metric → [0].
 */
export class LongTermInputs {
  private since: number[] = [];

  /** Minute index from which job `j`'s counts are "current" (the previous long-term run's). */
  sinceMinute(j: number): number {
    return this.since[j] ?? 0;
  }

  next(predictor: MinutePredictor, j: number, minuteCounts: readonly number[], horizon: number, q: number, since = this.sinceMinute(j)): readonly number[] {
    const f = forecastOrNull(predictor, j, minuteCounts, horizon, q);
    if (f !== null) return f;
    return recentCounts(minuteCounts, since);
  }

  /** Marks this long-term run's counts as consumed (the store's clear). */
  cleared(view: ClusterView): void {
    this.since = view.jobs.map((jv) => jv.minuteCounts.length);
  }
}

/** The minutes from `since` on, from the first one with an arrival; [0] if none has one. */
export function recentCounts(minuteCounts: readonly number[], since: number): number[] {
  const r = minuteCounts.slice(since);
  const first = r.findIndex((c) => c > 0);
  return first < 0 ? [0] : r.slice(first);
}

/** One job as Faro's utility solver takes it (the shape of `faroLongTerm(opts)`'s input). */
export interface UtilityJobInput {
  readonly x0: number;
  readonly acceptRate?: number;
  /** Predicted requests per minute for the next minutes at forecast quantile q. */
  readonly forecast: (q: number) => readonly number[];
}

/** Faro's long-term decision function (the solver with its quantile loop), e.g. `faroLongTerm({ objective, capacity })`. */
export type UtilitySolveFn = (jobs: readonly UtilityJobInput[]) => { replicas: number[]; acceptRate?: number[]; reason: string };

/**
 * Faro's long-term policy around its solver: x⁰ is the job's started replicas (the artifact counts
 * the replicas that report a queue length), the forecast is the predictor's next `horizonMin`
 * minutes from the completed minutes' counts, and the accept rate starts at 1 (the hybrid
 * controller's metrics carry no drop rate).
 */
export class UtilityLongTerm implements LongTermPolicy {
  lastReason = '';
  private readonly inputs = new LongTermInputs();

  constructor(readonly name: string, private readonly solve: UtilitySolveFn, private readonly predictor: MinutePredictor, private readonly horizonMin = 7) {}

  plan(view: ClusterView): Array<{ target: number; acceptRate?: number } | null> {
    const jobs: UtilityJobInput[] = view.jobs.map((jv, j) => {
      const memo = new Map<number, readonly number[]>();
      const since = this.inputs.sinceMinute(j);
      return {
        x0: jv.readyReplicas,
        forecast: (q: number) => {
          let f = memo.get(q);
          if (f === undefined) {
            f = this.inputs.next(this.predictor, j, jv.minuteCounts, this.horizonMin, q, since);
            memo.set(q, f);
          }
          return f;
        },
      };
    });
    const d = this.solve(jobs);
    this.inputs.cleared(view);
    this.lastReason = d.reason;
    return d.replicas.map((x, j) => ({ target: x, acceptRate: d.acceptRate?.[j] }));
  }
}

export interface HybridOptions {
  readonly tickS?: number;
  readonly longIntervalS?: number;
  /** Long-term actions wait up to this many ticks for a busy executor or free units. */
  readonly longTrials?: number;
  /** Short-term: ticks over the SLO before +1. */
  readonly upTicks?: number;
}

/**
 * Faro's hybrid autoscaler (and MArk's, with another long-term policy), as the artifact's
 * `HybirdAutoscaleController`: a 10-s tick; the long-term policy at t = 60 s and then at every
 * multiple of 300 s (its actions get 5 trials, and it clears the short-term counts); on the other
 * ticks the short-term rule for the jobs whose executor is idle: mean latency of the last 30 s over
 * the SLO on 3 ticks (not necessarily consecutive) → +1 replica, never down.
 */
export class FaroHybrid implements ClusterController {
  readonly tickS: number;
  readonly name: string;
  readonly book = new ActionBook();
  private readonly longIntervalS: number;
  private readonly longTrials: number;
  private readonly short: ThresholdCounter;
  private startedLong = false;

  constructor(private readonly longTerm: LongTermPolicy, opts: HybridOptions = {}, name?: string) {
    this.tickS = opts.tickS ?? 10;
    this.longIntervalS = opts.longIntervalS ?? 300;
    this.longTrials = opts.longTrials ?? 5;
    this.short = new ThresholdCounter(opts.upTicks ?? 3, Infinity, true);
    this.name = name ?? `hybrid(${longTerm.name})`;
  }

  tick(view: ClusterView): ControllerDecision | null {
    this.book.init(view);
    const t = Math.round(view.nowS * 1000) / 1000;
    let runLong = false;
    if (!this.startedLong && this.longIntervalS > 60) {
      if (t % 60 === 0) runLong = this.startedLong = true;
    } else if (t % this.longIntervalS === 0) runLong = true;
    const actions: FaroAction[] = [];
    let reason: string;
    if (runLong) {
      const plan = this.longTerm.plan(view, this.book);
      plan.forEach((p, j) => {
        if (p !== null) actions.push({ job: j, target: p.target, acceptRate: p.acceptRate, trials: this.longTrials });
      });
      this.short.clear();
      reason = `${this.longTerm.name}: targets ${plan.map((p) => p?.target ?? '-').join(',')}`;
    } else {
      view.jobs.forEach((jv, j) => {
        if (isScaling(jv)) return;
        const over = avgLatencyMetric(jv.recentLatencyMs.mean) > jv.sloMs;
        if (this.short.observe(j, over) === 1) actions.push({ job: j, delta: 1, trials: 1 });
      });
      reason = actions.length > 0 ? `short-term +1 for ${actions.map((a) => view.jobs[a.job].name).join(', ')}` : '';
    }
    const jobs = this.book.execute(view, actions);
    if (jobs.every((a) => a === null)) return null;
    return { jobs, reason };
  }
}
