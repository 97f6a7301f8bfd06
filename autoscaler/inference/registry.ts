import { InferencePolicy, PolicyDeps, PolicyFactory, PolicyParams } from './types';

const factories = new Map<string, PolicyFactory>();

/** Registers a policy factory under `name` (a new baseline is one file plus one call). */
export function registerPolicy(name: string, factory: PolicyFactory): void {
  if (factories.has(name)) throw new Error(`policy "${name}" is already registered`);
  factories.set(name, factory);
}

/** The factory registered as `name`; throws listing the known names. */
export function policy(name: string): PolicyFactory {
  const f = factories.get(name);
  if (!f) throw new Error(`unknown inference policy "${name}" (known: ${policyNames().join(', ')})`);
  return f;
}

/** Builds the policy `name` with its parameters. */
export function createPolicy(name: string, params: PolicyParams, deps: PolicyDeps): InferencePolicy<any> {
  return policy(name)(params, deps);
}

export function policyNames(): string[] {
  return [...factories.keys()].sort();
}
