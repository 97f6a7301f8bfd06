/**
 * Inference policies by name: one static table, one line per policy (a new baseline is one file
 * plus one line below). The hybrid's variants are stage configurations chosen by its `sloModel`
 * parameter (stages/variants.ts). Nothing registers itself on import.
 */
import { aiad, oneshot } from './baselines/faro-reactive';
import { diluHorizontal } from './baselines/dilu-horizontal';
import { kpa } from './baselines/kpa';
import { openfaasRps } from './baselines/openfaas-rps';
import { staticShare } from './baselines/static-share';
import { hybrid } from './hybrid';
import { InferencePolicy, PolicyDeps, PolicyFactory, PolicyParams } from './types';

const POLICIES: Readonly<Record<string, PolicyFactory>> = {
  hybrid,
  kpa,
  'static-share': staticShare,
  'openfaas-rps': openfaasRps,
  oneshot,
  aiad,
  'dilu-horizontal': diluHorizontal,
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
