import type { ClusterController, ClusterView, ControllerDecision, MinutePredictor } from '../../multitenant/types';
import { ActionBook, FaroHybrid, LongTermInputs, ThresholdCounter, avgLatencyMetric, type FaroAction, type LongTermPolicy } from './hybrid';

/**
 * The baselines of Faro's evaluation as the artifact runs them (src/policy.py, config/autoscaler/*,
 * experiments/…/max_queue_50_one/*): FairShare, Oneshot, AIAD and MArk/Cocktail/Barista.
 */

/** FairShare: ⌊R / jobs⌋ replicas per job from the start, never changed (the artifact's "default" controller). */
export class FairShare implements ClusterController {
  readonly name = 'FairShare';
  readonly tickS = 10;

  constructor(readonly capacity: number, readonly jobs: number) {}

  /** The replicas each job starts with. */
  get share(): number {
    return Math.max(1, Math.floor(this.capacity / this.jobs));
  }

  tick(view: ClusterView): ControllerDecision | null {
    const share = this.share;
    const jobs = view.jobs.map((j) => (j.replicas !== share && !(j as { scaling?: boolean }).scaling ? { replicas: share } : null));
    return jobs.some((a) => a !== null) ? { jobs, reason: `fair share: ${share} replicas per job` } : null;
  }
}

type StepKind = 'oneshot' | 'aiad';

/**
 * The artifact's reactive autoscale controller (`AutoscaleController` with policy `oneshot` or
 * `aiad`): every 10 s, per job, the mean latency of the last 30 s (0 when nothing finished) against
 * the 720-ms target; 3 ticks over it fire an upscale, 60 ticks under it a downscale (a tick on the
 * other side restarts the count). Oneshot scales x to ⌈x · L / target⌉, AIAD by ±1. An action for a
 * job still scaling is dropped; upscales are capped by the units the controller believes free.
 */
export class ReactiveBaseline implements ClusterController {
  readonly tickS = 10;
  readonly name: string;
  private readonly counter = new ThresholdCounter(3, 60, false);
  private readonly book = new ActionBook();

  constructor(readonly kind: StepKind) {
    this.name = kind === 'oneshot' ? 'Oneshot' : 'AIAD';
  }

  tick(view: ClusterView): ControllerDecision | null {
    const actions: FaroAction[] = [];
    view.jobs.forEach((jv, j) => {
      const metric = avgLatencyMetric(jv.recentLatencyMs.mean);
      const fire = this.counter.observe(j, metric > jv.sloMs);
      if (fire === 0) return;
      if (this.kind === 'aiad') actions.push({ job: j, delta: fire, trials: 1 });
      else actions.push({ job: j, factor: metric / jv.sloMs, trials: 1 });
    });
    if (actions.length === 0) return null;
    const jobs = this.book.execute(view, actions);
    if (jobs.every((a) => a === null)) return null;
    return { jobs, reason: `${this.name}: ${actions.map((a) => `${view.jobs[a.job].name} ${a.delta ?? `×${a.factor?.toFixed(2)}`}`).join(', ')}` };
  }
}

export interface MarkOptions {
  readonly predictor: MinutePredictor;
  /** Forecast quantile (the artifact's model_8 config: 0.6), applied only when the forecaster draws more than one sample. */
  readonly quantile?: number;
  /**
   * Samples the forecaster draws (model_8.yaml: `num_samples: 1`, a model without a likelihood). The
   * artifact's DartsPredictor.predict applies the quantile only `if pred_raw.n_samples > 1`, so with one
   * sample MArk acts on the point forecast: q = 0.5 of our symmetric stand-in forecasters. Default 1.
   */
  readonly samples?: number;
  readonly horizonMin?: number;
  readonly processingMs?: number;
  readonly sloMs?: number;
}

/**
 * MArk/Cocktail/Barista's long-term step (`pred_darts` with aggregator and estimator "max"): per job
 * x = ⌈max of the next 7 minutes' forecast (req/s) · p / SLO⌉. Before any minute has completed the
 * job keeps its count.
 */
export class MarkLongTerm implements LongTermPolicy {
  readonly name: string;
  private readonly inputs = new LongTermInputs();

  constructor(private readonly opts: MarkOptions) {
    this.name = `mark(${opts.predictor.name})`;
  }

  plan(view: ClusterView): Array<{ target: number } | null> {
    const { predictor, quantile: q = 0.6, samples = 1, horizonMin = 7, processingMs = 180, sloMs = 720 } = this.opts;
    const quantile = samples > 1 ? q : 0.5;
    const out = view.jobs.map((jv, j) => {
      if (jv.minuteCounts.length === 0) return null;
      // forecast, or the counts since the previous long-term run when the forecaster answers None (see LongTermInputs)
      const f = this.inputs.next(predictor, j, jv.minuteCounts, horizonMin, quantile);
      const peak = f.length > 0 ? Math.max(...f) : jv.minuteCounts[jv.minuteCounts.length - 1];
      return { target: Math.ceil(((peak / 60) * processingMs) / sloMs - 1e-9) };
    });
    this.inputs.cleared(view);
    return out;
  }
}

/** MArk/Cocktail/Barista: the MArk long-term step in the same hybrid as Faro (short-term +1 rule). */
export function markHybrid(opts: MarkOptions): FaroHybrid {
  return new FaroHybrid(new MarkLongTerm(opts), {}, 'MArk/Cocktail/Barista');
}
