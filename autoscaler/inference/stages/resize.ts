/**
 * The stages of a horizontal-only policy (the baselines: KPA, OpenFaaS rps, Faro's reactive ones,
 * Dilu horizontal, static shares): a fixed replica configuration (share), a replica count from the
 * policy's own signals, forecast and hysteresis (count), and the resize to that count
 * (`resizeTo`). A baseline is a choice of the two stages, one line in ../registry.ts.
 */
import { parseParams, ReplicaConfig, resizeTo } from '../decision-helpers';
import type { ScalingSpec, InferencePolicy, Observation, PolicyDeps, PolicyFactory } from '../types';

/** Share stage: the configuration every replica of the function runs with. */
export interface ShareStage {
  configOf(spec: ScalingSpec): ReplicaConfig;
}

/** Count stage: the replicas wanted now (before min/max scale), the next state and the reason. */
export interface CountStage<S> {
  init(): S;
  count(spec: ScalingSpec, state: S, obs: Observation, now: number, cfg: ReplicaConfig): { want: number; state: S; reason: string };
}

export interface HorizontalStages<S> {
  share: ShareStage;
  count: CountStage<S>;
  /** Optional: the spec the resize holds to (a policy's own replica ceiling). */
  limit?: (spec: ScalingSpec) => ScalingSpec;
}

/** Whole devices per replica (`exclusive`), or a fixed fraction, at the spec's batch or `batchSize`. */
export function fixedShare(cfg: { exclusive: boolean; smShare: number; quota: number; batchSize?: number }): ShareStage {
  return { configOf: (spec) => ({ exclusive: cfg.exclusive, smShare: cfg.smShare, quota: cfg.quota,
    batchSize: cfg.batchSize === undefined ? spec.maxBatchSize : Math.min(cfg.batchSize, spec.maxBatchSize) }) };
}

/** A horizontal-only policy `name` with parameters `defaults` and the stages `build` chooses. */
export function horizontalOnly<P extends Record<string, number | boolean | string>, S>(name: string, defaults: P,
  build: (p: P, deps: PolicyDeps) => HorizontalStages<S>): PolicyFactory {
  return (params, deps): InferencePolicy<S> => {
    const p = parseParams(name, defaults, params);
    const { share, count, limit } = build(p, deps);
    return {
      name,
      initialState: () => count.init(),
      decide(spec, state, obs, now) {
        const cfg = share.configOf(spec);
        const c = count.count(spec, state, obs, now, cfg);
        const decision = resizeTo(limit ? limit(spec) : spec, obs, deps.capability, Math.max(1, c.want), cfg, c.reason);
        return { decision, nextState: c.state, reason: decision.reason };
      },
    };
  };
}
