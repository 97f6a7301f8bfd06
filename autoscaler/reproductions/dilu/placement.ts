import { fits, type Bounds, type ClusterState, type Gpu, type SchedInstance } from './cluster';
import { affinityGpus, selectOpt, trainingOnNode, weightedScore, type Placement, type TieKey } from './select';

/**
 * Dilu's collocation placement (ASPLOS'25, Algorithm 1), as its scheduling simulator runs it
 * (`scheduling/simulations/baseline/scheduler_dilu.py`). Pure: reads the cluster, returns the
 * parts to book (the simulator books them) or null when the instance cannot be placed.
 *
 * A GPU fits when Σrequest + r ≤ Ω, Σlimit + l ≤ γ and memory + m ≤ 40 GB. SelectOptGPU takes the
 * fitting GPU with the lowest α·(1 − SM requested) + β·(1 − memory used / 40) after placement.
 * - inference: workload-affinity GPUs first, then the other active GPUs (an unordered set in the
 *   artifact: `tie` stands for its order), then the best pool GPU (all score alike unless float
 *   residue of earlier bookings tells them apart: the first one, in practice);
 * - LLM inference: best fit over the active GPUs in list order; else split its memory over one
 *   node's active GPUs that fit its SM (fullest memory first, each part booked with request = limit
 *   = r; deleting it later subtracts l, as the artifact does); else the first pool GPU;
 * - training: n GPUs on one node, active GPUs first (`trainingOnNode`).
 */

export interface DiluParams extends Bounds {
  /** Weight of SM fragmentation in the score (0.6). */
  readonly alpha: number;
  /** Weight of memory fragmentation (0.4). */
  readonly beta: number;
}

export const DILU_PLACEMENT: DiluParams = { omega: 1, gamma: 1.5, alpha: 0.6, beta: 0.4 };

/** Service of an instance name: in the simulator's input every instance is its own service. */
export const ownService = (name: string): string => name;

export function placeDilu(c: ClusterState, inst: SchedInstance, p: DiluParams = DILU_PLACEMENT, tie?: TieKey, serviceOf = ownService): Placement | null {
  const req = inst.smRequest;
  const lim = inst.smLimit;
  const release = { req, lim };
  const score = weightedScore(p.alpha, p.beta, c.memGb);
  if (inst.type === 'training') return trainingOnNode(c, inst, req, lim, p, false);
  const mem = inst.memoryGb[0];
  const one = (g: Gpu | undefined): Placement | null => (g ? { parts: [{ gpu: g.id, req, lim, mem }], release } : null);
  if (inst.type === 'inference') {
    const near = affinityGpus(c, serviceOf(inst.name), serviceOf);
    const g = selectOpt(near, req, lim, mem, p, c.memGb, score, tie);
    if (g) return one(g);
    const nearSet = new Set(near);
    const rest = near.length ? c.active.filter((x) => !nearSet.has(x)) : c.active;
    return one(selectOpt(rest, req, lim, mem, p, c.memGb, score, tie) ?? selectOpt(c.pool, req, lim, mem, p, c.memGb, score));
  }
  const fit = selectOpt(c.active, req, lim, mem, p, c.memGb, score);
  if (fit) return one(fit);
  const split = splitOverNode(c, req, lim, mem, p);
  if (split) return { parts: split, release };
  return one(c.pool[0]);
}

/** An LLM's memory over one node's SM-fitting active GPUs, fullest first; null if no node has room. */
function splitOverNode(c: ClusterState, req: number, lim: number, mem: number, b: Bounds): Placement['parts'] | null {
  const byNode = new Map<number, Gpu[]>();
  for (const g of c.active) {
    if (!fits(g, req, lim, 0, b, c.memGb)) continue;
    const list = byNode.get(g.node);
    if (list) list.push(g);
    else byNode.set(g.node, [g]);
  }
  for (const list of byNode.values()) {
    const sorted = list.slice().sort((a, b2) => b2.mem - a.mem);
    const free = sorted.reduce((s, g) => s + (c.memGb - g.mem), 0);
    if (free < mem) continue;
    const parts = [];
    let left = mem;
    for (const g of sorted) {
      if (left <= 0) break;
      const m = Math.min(c.memGb - g.mem, left);
      parts.push({ gpu: g.id, req, lim: req, mem: m });
      left -= m;
    }
    return parts;
  }
  return null;
}
