import { type Bounds, type ClusterState, type SchedInstance } from './cluster';
import { ownService } from './placement';
import { affinityGpus, selectOpt, smScore, trainingOnNode, type Placement, type TieKey } from './select';

/**
 * The baselines of Dilu's scheduling simulator (`scheduling/simulations/baseline/`), as coded there.
 * - INFless-l (`scheduler_infless_l.py`): books the SM limit as the request (r := l); scores the
 *   SM left free only; LLM inference is placed like inference (one GPU); a new GPU is the first
 *   of the pool, unchecked; training as Dilu's, pool GPUs filtered by fit.
 * - INFless-r (`scheduler_infless_r.py`): the same with l := r.
 * - Exclusive, the Kubernetes default (`scheduler_k8s.py`, plotted as "Exclusive"): every
 *   inference instance takes a whole new GPU, a training job n new GPUs from the head of the pool
 *   (any node); nothing is ever shared. Its cluster has 3,000 nodes.
 */

export const INFLESS_BOUNDS: Bounds = { omega: 1, gamma: 1.5 };

export type InflessMode = 'limit' | 'request';

export function placeInfless(c: ClusterState, inst: SchedInstance, mode: InflessMode, b: Bounds = INFLESS_BOUNDS, tie?: TieKey): Placement | null {
  const req = mode === 'limit' ? inst.smLimit : inst.smRequest;
  const lim = mode === 'limit' ? inst.smLimit : inst.smRequest;
  if (inst.type === 'training') return trainingOnNode(c, inst, req, lim, b, true);
  const mem = inst.memoryGb[0];
  const near = affinityGpus(c, inst.name, ownService);
  const nearSet = new Set(near);
  const g = selectOpt(near, req, lim, mem, b, c.memGb, smScore, tie)
    ?? selectOpt(near.length ? c.active.filter((x) => !nearSet.has(x)) : c.active, req, lim, mem, b, c.memGb, smScore, tie)
    ?? c.pool[0];
  return g ? { parts: [{ gpu: g.id, req, lim, mem }], release: { req, lim } } : null;
}

export const K8S_CLUSTER = { nodes: 3000, gpusPerNode: 4, memGb: 40 };

export function placeExclusive(c: ClusterState, inst: SchedInstance): Placement | null {
  const n = inst.type === 'training' ? inst.gpuNum : 1;
  if (c.pool.length < n) return null;
  const parts = c.pool.slice(0, n).map((g) => ({ gpu: g.id, req: inst.smRequest, lim: inst.smLimit, mem: inst.memoryGb[0] }));
  return { parts, release: { req: inst.smRequest, lim: inst.smLimit } };
}
