/**
 * Inference policies by name: one static table, one line per policy, each a choice of stages
 * (stages/). The baselines are horizontal-only: a share stage (the replicas' fixed configuration)
 * and a count stage (their own signals, forecast and hysteresis), resized by `horizontalOnly`;
 * the ports of published autoscalers (Knative's KPA, OpenFaaS's rps, Faro's oneshot and AIAD,
 * Dilu) are in ../reproductions/, our own static-share in baselines/; 'dilu' adds Dilu's Algorithm 1
 * placement (placement-dilu.ts) to 'dilu-horizontal'; 'mlfaas-packed' is the hybrid packed by time quota
 * (placement-packed.ts).
 * The hybrid runs forecast → SLO model → vertical → horizontal → hysteresis and its SLO guard;
 * its variants are the stage configurations its `sloModel` parameter picks (stages/variants.ts).
 * Nothing registers itself on import.
 */
import { FARO_REACTIVE_DEFAULTS, reactiveCount } from '../reproductions/faro/reactive';
import { DILU_DEFAULTS, diluCount, diluShare } from '../reproductions/dilu/horizontal';
import { KPA_DEFAULTS, kpaCount, kpaLimit } from '../reproductions/knative/kpa';
import { OPENFAAS_DEFAULTS, openfaasRpsCount } from '../reproductions/openfaas/rps';
import { STATIC_DEFAULTS, staticShareCount, staticShareOf } from './baselines/static-share';
import { hybrid } from './hybrid';
import { DILU_PLACEMENT_DEFAULTS, diluPlacement } from './placement-dilu';
import { mlfaasPacked } from './placement-packed-policy';
import { fixedShare, horizontalOnly } from './stages/resize';
import { InferencePolicy, PolicyDeps, PolicyFactory, PolicyParams } from './types';

const POLICIES: Readonly<Record<string, PolicyFactory>> = {
  hybrid,
  kpa: horizontalOnly('kpa', KPA_DEFAULTS, (p) => ({ share: fixedShare({ exclusive: true, smShare: 1, quota: 1, batchSize: p.batchSize }), count: kpaCount(p),
    limit: kpaLimit(p) })),
  'static-share': horizontalOnly('static-share', STATIC_DEFAULTS, (p, d) => ({ share: staticShareOf(p, d.capability),
    count: staticShareCount(p, d.capability) })),
  'openfaas-rps': horizontalOnly('openfaas-rps', OPENFAAS_DEFAULTS, (p) => ({ share: fixedShare(p), count: openfaasRpsCount(p) })),
  oneshot: horizontalOnly('oneshot', FARO_REACTIVE_DEFAULTS, (p) => ({ share: fixedShare(p), count: reactiveCount('oneshot', p) })),
  aiad: horizontalOnly('aiad', FARO_REACTIVE_DEFAULTS, (p) => ({ share: fixedShare(p), count: reactiveCount('aiad', p) })),
  'dilu-horizontal': horizontalOnly('dilu-horizontal', DILU_DEFAULTS, (p, d) => ({ share: diluShare(p, d.capability), count: diluCount(p, d.capability) })),
  // the faithful Dilu: its profiler's shares, lazy scaling and Algorithm 1's placement (Ω, γ, score weights, memory)
  dilu: horizontalOnly('dilu', { ...DILU_DEFAULTS, ...DILU_PLACEMENT_DEFAULTS }, (p, d) => ({ share: diluShare(p, d.capability),
    count: diluCount(p, d.capability), place: diluPlacement(p) })),
  // ours (issue 24): the hybrid with best-fit packing by smShare × quota, forecast headroom and consolidation on scale-in
  'mlfaas-packed': mlfaasPacked,
};

/** The factory named `name`; throws listing the known names. */
export function policy(name: string): PolicyFactory {
  const f = Object.prototype.hasOwnProperty.call(POLICIES, name) ? POLICIES[name] : undefined;
  if (!f) throw new Error(`unknown inference policy "${name}" (known: ${policyNames().join(', ')})`);
  return f;
}

/** Builds the policy `name` with its parameters. */
export function createPolicy(name: string, params: PolicyParams, deps: PolicyDeps): InferencePolicy<any> {
  return policy(name)(params, deps);
}

export function policyNames(): string[] {
  return Object.keys(POLICIES).sort();
}
