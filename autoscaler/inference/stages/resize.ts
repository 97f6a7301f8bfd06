/**
 * The stages of a horizontal-only policy (the baselines: KPA, OpenFaaS rps, Faro's reactive ones,
 * Dilu horizontal, static shares): a fixed replica configuration (share), a replica count from the
 * policy's own signals, forecast and hysteresis (count), and the resize to that count
 * (`resizeTo`). A baseline is a choice of the two stages, one line in ../registry.ts.
 */
import { ClusterOverlay } from '../cluster';
import { parseParams, ReplicaConfig, resizeTo, weightsByCapability } from '../decision-helpers';
import type { Capability, Decision, ScalingSpec, InferencePolicy, Observation, Placement, PolicyDeps, PolicyFactory } from '../types';

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
  /** Optional: where new replicas go (e.g. Dilu's Algorithm 1, ../placement-dilu.ts); absent: `placeFixed`, as before. */
  place?: PlaceStage;
}

/** Placement stage: `count` new replicas of `fn` at `cfg` on a working copy of the cluster (it books them there). */
export type PlaceStage = (overlay: ClusterOverlay, fn: string, cfg: ReplicaConfig, count: number) => Placement[];

/**
 * `resizeTo` with the new replicas placed by `place`: removals, quotas and weights as `resizeTo`
 * gives them (it places nothing when the count does not grow).
 */
export function resizeWith(place: PlaceStage, spec: ScalingSpec, obs: Observation, cap: Capability, target: number, cfg: ReplicaConfig,
  reason: string): Decision {
  const n = obs.replicas.length;
  const want = Math.max(spec.minScale, Math.min(spec.maxScale, Math.round(target)));
  if (want <= n) return resizeTo(spec, obs, cap, target, cfg, reason);
  const add = place(new ClusterOverlay(obs.cluster), spec.name, cfg, want - n);
  const replicas = n + add.length;
  const why = replicas === n ? `${reason}; keep ${n}` : `${reason}; ${n} → ${replicas} replicas`;
  const q = cfg.exclusive ? 1 : cfg.quota;
  const quotas = obs.replicas.filter((r) => Math.abs(r.quota - q) > 1e-9).map((r) => ({ replicaId: r.id, quota: q }));
  return { replicas, quotas, add, remove: [], weights: weightsByCapability(cap, spec.name, obs.replicas), reason: why };
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
    const { share, count, limit, place } = build(p, deps);
    return {
      name,
      initialState: () => count.init(),
      decide(spec, state, obs, now) {
        const cfg = share.configOf(spec);
        const c = count.count(spec, state, obs, now, cfg);
        const sp = limit ? limit(spec) : spec;
        const decision = place ? resizeWith(place, sp, obs, deps.capability, Math.max(1, c.want), cfg, c.reason)
          : resizeTo(sp, obs, deps.capability, Math.max(1, c.want), cfg, c.reason);
        return { decision, nextState: c.state, reason: decision.reason };
      },
    };
  };
}
