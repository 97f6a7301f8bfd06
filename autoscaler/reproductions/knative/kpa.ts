import { fmt } from '../../inference/decision-helpers';
import type { CountStage } from '../../inference/stages/resize';
import type { ScalingSpec } from '../../inference/types';

/**
 * Knative KPA as KServe runs it: concurrency averaged over a stable (60 s) and a panic (6 s)
 * window; desired = ⌈concurrency / (target · utilisation)⌉; panic when the panic-window desire is
 * ≥ 2× the ready pods, holding the count from falling until a stable window passes without panic;
 * scale-down at most halves the ready pods per step (max-scale-down-rate 2). One exclusive GPU per
 * replica (the share stage, in autoscaler/inference/registry.ts). targetConcurrency 1 and batch 4 are HAS-GPU's KServe setup (validation/kserve/yaml:
 * scaleTarget 1, HAS_GPU_BATCH_SIZE 4); stable/panic windows, 0.7 utilisation and the 2× panic
 * threshold are Knative's defaults. Concurrency per interval is the time-averaged requests in the
 * system (queued + executing) when the observation carries it (the simulator does; Knative's
 * queue-proxy reports the same average), else in-flight + queued at the interval's end.
 * maxReplicas (0: the spec's maxScale) — HAS-GPU's KServe InferenceServices set minReplicas 1,
 * maxReplicas 2 (validation/kserve/yaml/*.yaml); the HAS-GPU suite of the benchmark uses that.
 */
export const KPA_DEFAULTS = {
  stableWindowS: 60,
  panicWindowS: 6,
  panicThreshold: 2,
  targetUtilization: 0.7,
  targetConcurrency: 1,
  maxScaleDownRate: 2,
  maxScaleUpRate: 1000,
  batchSize: 4,
  maxReplicas: 0,
};

export interface KpaState {
  /** [ms, concurrency] samples within the stable window. */
  samples: Array<[number, number]>;
  /** ms when panic mode started, null when not panicking. */
  panicSince: number | null;
  /** The highest desired count while panicking. */
  panicMax: number;
}

/** maxReplicas > 0: the spec with its max_scale capped there (what the resize holds to). */
export const kpaLimit = (p: typeof KPA_DEFAULTS) => (p.maxReplicas > 0
  ? (spec: ScalingSpec): ScalingSpec => ({ ...spec, maxScale: Math.min(spec.maxScale, p.maxReplicas) })
  : undefined);

/** Count stage: the stable or panic window's desire, within the scale-up and scale-down rates. */
export function kpaCount(p: typeof KPA_DEFAULTS): CountStage<KpaState> {
  return {
    init: () => ({ samples: [], panicSince: null, panicMax: 0 }),
    count(_spec, state, obs, now) {
      const conc = obs.meanConcurrency ?? obs.inFlight + obs.queueLength;
      const samples = [...state.samples.filter(([t]) => t > now - p.stableWindowS * 1000), [now, conc] as [number, number]];
      const avg = (w: number) => {
        const xs = samples.filter(([t]) => t > now - w * 1000);
        return xs.reduce((a, [, c]) => a + c, 0) / Math.max(1, xs.length);
      };
      const per = p.targetConcurrency * p.targetUtilization;
      const stable = Math.ceil(avg(p.stableWindowS) / per);
      const panicDesired = Math.ceil(avg(p.panicWindowS) / per);
      const ready = Math.max(1, obs.replicas.filter((r) => r.ready).length);
      let panicSince = state.panicSince;
      let panicMax = state.panicMax;
      if (panicDesired / ready >= p.panicThreshold) {
        if (panicSince === null) panicMax = 0;
        panicSince = now;
      } else if (panicSince !== null && now - panicSince >= p.stableWindowS * 1000) panicSince = null;
      let want: number;
      let mode: string;
      if (panicSince !== null) {
        panicMax = Math.max(panicMax, panicDesired, obs.replicas.length);
        want = panicMax;
        mode = 'panic';
      } else {
        want = stable;
        mode = 'stable';
      }
      want = Math.min(want, Math.ceil(ready * p.maxScaleUpRate));
      want = Math.max(want, Math.floor(ready / p.maxScaleDownRate));
      return { want, state: { samples, panicSince, panicMax },
        reason: `kpa ${mode}: concurrency ${fmt(avg(p.stableWindowS), 2)} (60 s) / ${fmt(avg(p.panicWindowS), 2)} (6 s), desire ${want}` };
    },
  };
}
