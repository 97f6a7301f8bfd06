import { placeExclusive, placeInfless, K8S_CLUSTER } from '../../reproductions/dilu/baselines';
import { makeCluster } from '../../reproductions/dilu/cluster';
import { DILU_PLACEMENT, placeDilu, type DiluParams } from '../../reproductions/dilu/placement';
import type { TieKey } from '../../reproductions/dilu/select';
import { makeOursPolicy, type OursOptions } from '../../multitenant/placement';
import { mulberry32 } from '../rng';
import type { SchedPolicy } from './simulator';

/**
 * The placements the scheduling simulator runs, by name. `seed` sets the order among GPUs of
 * equal score where the artifact iterates a Python set (its order changes from run to run);
 * seed 0 = the active list's order.
 */

export interface SchedPolicyOptions {
  readonly seed?: number;
  /** Overrides of Dilu's Ω, γ, α, β. */
  readonly dilu?: Partial<DiluParams>;
  /** Settings of ours (`autoscaler/multitenant/placement`). */
  readonly ours?: OursOptions;
}

/** The artifact's placements (Exclusive = its Kubernetes default, `scheduler_k8s.py`) and ours. */
export const SCHED_POLICIES = ['dilu', 'infless-l', 'infless-r', 'exclusive', 'ours'] as const;
export type SchedPolicyName = (typeof SCHED_POLICIES)[number];

/** A random key per GPU, fixed for the run: the order a set of GPU objects would iterate in. */
export function tieKeys(gpus: number, seed: number): TieKey {
  if (!seed) return undefined;
  const rand = mulberry32(seed);
  const k = new Float64Array(gpus);
  for (let i = 0; i < gpus; i++) k[i] = rand();
  return k;
}

export function makeSchedPolicy(name: SchedPolicyName, o: SchedPolicyOptions = {}): SchedPolicy {
  if (name === 'ours') return makeOursPolicy(o.ours);
  if (name === 'exclusive') {
    const cluster = makeCluster(K8S_CLUSTER.nodes, K8S_CLUSTER.gpusPerNode, K8S_CLUSTER.memGb);
    return { name, cluster, place: placeExclusive };
  }
  const cluster = makeCluster();
  const tie = tieKeys(cluster.gpus.length, o.seed ?? 0);
  if (name === 'dilu') {
    const p = { ...DILU_PLACEMENT, ...o.dilu };
    return { name, cluster, place: (c, inst) => placeDilu(c, inst, p, tie) };
  }
  const mode = name === 'infless-l' ? 'limit' : 'request';
  return { name, cluster, place: (c, inst) => placeInfless(c, inst, mode, undefined, tie) };
}
