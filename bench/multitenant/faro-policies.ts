import type { ClusterController } from '../../autoscaler/multitenant/types';
import { FairShare, ReactiveBaseline } from '../../autoscaler/reproductions/faro/baselines';

/** Which forecaster a predictive policy uses in a rerun (the "rerun naive / oracle" columns). */
export type PredictorName = 'naive' | 'oracle';

/** A policy of the Faro comparison: how to build it for a cluster of R units, and what it starts with. */
export interface FaroPolicyDef {
  readonly name: string;
  /** Needs a forecaster (the rerun columns are per predictor). */
  readonly predictive: boolean;
  make(R: number, seed: number, predictor: PredictorName, jobs: number): ClusterController;
  /** Replicas per job at t = 0. */
  initialReplicas(R: number, jobs: number): number;
}

const defs: FaroPolicyDef[] = [
  {
    name: 'FairShare',
    predictive: false,
    make: (R, _seed, _p, jobs) => new FairShare(R, jobs),
    initialReplicas: (R, jobs) => Math.max(1, Math.floor(R / jobs)),
  },
  { name: 'Oneshot', predictive: false, make: () => new ReactiveBaseline('oneshot'), initialReplicas: () => 1 },
  { name: 'AIAD', predictive: false, make: () => new ReactiveBaseline('aiad'), initialReplicas: () => 1 },
];

/** The registry: every Faro-comparison policy by name (case-insensitive lookup). */
export const FARO_POLICIES: readonly FaroPolicyDef[] = defs;

export function registerFaroPolicy(def: FaroPolicyDef): void {
  if (defs.some((d) => d.name === def.name)) throw new Error(`policy ${def.name} already registered`);
  defs.push(def);
}

export function faroPolicy(name: string): FaroPolicyDef {
  const d = defs.find((x) => x.name.toLowerCase() === name.toLowerCase());
  if (d === undefined) throw new Error(`unknown policy ${name}; known: ${defs.map((x) => x.name).join(', ')}`);
  return d;
}
