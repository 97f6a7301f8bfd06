/**
 * The hybrid policy's variants as stage configurations: `sloModel` picks one implementation per
 * stage. A new variant is one line here; a new implementation of a stage is one function in the
 * stage's file.
 */
import { EPS, HybridParams, r6 } from '../hybrid-params';
import type { PolicyDeps } from '../types';
import { quantileForecast } from './forecast';
import { cheapestCover, replicaForGap } from './horizontal';
import { betaScaleDown, downUtilScaleDown } from './hysteresis';
import { fleetQueueModel, perReplicaModel } from './slo-model';
import { quotaUpByGap, quotaUpUntilFits } from './vertical';
import type { StageDeps, Stages } from './types';

/** A replica-at-a-time Algorithm 1 (HAS-GPU) with a per-replica SLO model (mdc | budget | none). */
function perReplica(deps: StageDeps): Stages {
  const model = perReplicaModel(deps);
  return { forecast: quantileForecast(deps, false), sloModel: model, vertical: quotaUpByGap(deps, model), horizontal: replicaForGap(deps, model),
    hysteresis: betaScaleDown(deps, model) };
}

/** Ours: the replicas as one queue, a cold-start lead, scale-down to R/downUtil and the bridge release. */
function fleetQueue(deps: StageDeps): Stages {
  const model = fleetQueueModel(deps);
  return { forecast: quantileForecast(deps, true), sloModel: model, vertical: quotaUpUntilFits(deps, model), horizontal: cheapestCover(deps, model),
    hysteresis: downUtilScaleDown(deps, model) };
}

/** sloModel → the stages it runs with. */
export const HYBRID_VARIANTS: Readonly<Record<string, (deps: StageDeps) => Stages>> = {
  shared: fleetQueue,
  mdc: perReplica,
  budget: perReplica,
  none: perReplica,
};

/** The hybrid's parameters checked, and its stages. */
export function hybridStages(p: HybridParams, deps: PolicyDeps): Stages {
  if (!(p.alpha > 0 && p.beta >= 0 && p.beta < p.alpha)) throw new Error(`hybrid: need 0 ≤ beta < alpha, got alpha=${p.alpha} beta=${p.beta}`);
  if (!(p.quotaStep > 0 && p.quotaStep <= 1)) throw new Error(`hybrid: quotaStep must be in (0, 1], got ${p.quotaStep}`);
  if (!(p.quantile > 0 && p.quantile < 1)) throw new Error(`hybrid: quantile must be in (0, 1), got ${p.quantile}`);
  if (!['cheapest', 'smax'].includes(p.usedGpuConfig)) throw new Error(`hybrid: usedGpuConfig must be cheapest or smax, got ${p.usedGpuConfig}`);
  const variant = Object.prototype.hasOwnProperty.call(HYBRID_VARIANTS, p.sloModel) ? HYBRID_VARIANTS[p.sloModel] : undefined;
  if (!variant) throw new Error(`hybrid: sloModel must be mdc, shared, budget or none, got ${p.sloModel}`);
  if (!(p.downUtil > p.beta && p.downUtil <= p.alpha)) throw new Error(`hybrid: downUtil must be in (beta, alpha], got ${p.downUtil}`);
  const quotaLevels: number[] = [];
  for (let q = p.minQuota; q <= 1 + EPS; q += p.quotaStep) quotaLevels.push(r6(q));
  const leadS = p.leadS >= 0 ? p.leadS : Math.max(0, deps.coldStartS ?? 0);
  return variant({ p, cap: deps.capability, quotaLevels, leadS });
}
