/**
 * Training policies by name. The simulator, the benchmark and the live training round pick a
 * policy from configuration here; a new baseline is one file plus one line below.
 */
import { gandiva, optimus, pollux, themis, tiresias } from './baselines/cluster-schedulers';
import { edf, edfAdmission, fifo, sjf } from './baselines/simple';
import { elasticFlowArtifactPolicy } from '../reproductions/elasticflow/policy';
import { mlfaasPolicy } from './mlfaas/policy';
import { fapesPolicy } from './fapes/policy';
import type { TrainingPolicy } from './types';

const REGISTRY: Readonly<Record<string, () => TrainingPolicy>> = {
  mlfaas: () => mlfaasPolicy(),
  elasticflow: () => elasticFlowArtifactPolicy(),
  fapes: () => fapesPolicy(),
  edf: () => edf,
  'edf-admission': () => edfAdmission,
  gandiva: () => gandiva,
  tiresias: () => tiresias,
  fifo: () => fifo,
  sjf: () => sjf,
  optimus: () => optimus,
  pollux: () => pollux,
  themis: () => themis,
};

export function policyNames(): string[] {
  return Object.keys(REGISTRY);
}

export class UnknownPolicyError extends Error {
  readonly code = 'UNKNOWN_POLICY';
  constructor(name: string) {
    super(`unknown training policy "${name}"; known: ${policyNames().join(', ')}`);
  }
}

export function getPolicy(name: string): TrainingPolicy {
  const make = REGISTRY[name];
  if (!make) throw new UnknownPolicyError(name);
  return make();
}
