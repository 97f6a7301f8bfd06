import { fits, type Bounds, type ClusterState, type Gpu, type Part, type SchedInstance } from './cluster';

/**
 * Helpers shared by Dilu's Algorithm 1 and the artifact's baselines: the GPU choice by a score
 * (lowest wins, the first of equal scores in the candidates' order unless a tie key says
 * otherwise), the workload-affinity candidates and the one-node training placement.
 */

/** A placement decision: what each GPU books, and what deleting the instance later subtracts. */
export interface Placement {
  readonly parts: Part[];
  readonly release: { readonly req: number; readonly lim: number };
}

/** Score of a GPU after placing (r, m) on it: lower is better. */
export type Score = (g: Gpu, req: number, mem: number) => number;

/** Dilu's SelectOptGPU score: α·(1 − SM requested) + β·(1 − memory used / total), both after placement. */
export function weightedScore(alpha: number, beta: number, memGb: number): Score {
  return (g, req, mem) => alpha * (1 - (g.smReq + req) / 1) + beta * (1 - (g.mem + mem) / memGb);
}

/** INFless's score: the SM left free after placement. */
export const smScore: Score = (g, req) => 1 - (g.smReq + req) / 1;

/**
 * Per-run order among GPUs of equal score. The artifact iterates a Python set of GPU objects,
 * whose order follows their memory addresses and so changes from run to run; a seeded random key
 * per GPU stands for it. Undefined = the candidates' own order.
 */
export type TieKey = Float64Array | undefined;

/** The feasible candidate with the lowest score, or undefined. */
export function selectOpt(cands: Iterable<Gpu>, req: number, lim: number, mem: number, b: Bounds, memGb: number, score: Score, tie?: TieKey): Gpu | undefined {
  let best: Gpu | undefined;
  let bestScore = Infinity;
  for (const g of cands) {
    if (!fits(g, req, lim, mem, b, memGb)) continue;
    const s = score(g, req, mem);
    if (s < bestScore || (tie && s === bestScore && best && tie[g.id] < tie[best.id])) {
      best = g;
      bestScore = s;
    }
  }
  return best;
}

/**
 * Workload affinity: on each active GPU that already runs an instance of `service`, the other
 * GPUs of the training jobs sharing that GPU (placing beside them keeps the job's data-parallel
 * ranks evenly slowed). Empty when the service has no earlier instance.
 */
export function affinityGpus(c: ClusterState, service: string, serviceOf: (name: string) => string): Gpu[] {
  const out = new Set<Gpu>();
  for (const [name, mine] of c.placed) {
    if (serviceOf(name) !== service) continue;
    for (const { gpu } of mine.parts) {
      for (const other of c.gpus[gpu].held.keys()) {
        const p = c.placed.get(other);
        if (p?.inst.type !== 'training') continue;
        for (const part of p.parts) if (part.gpu !== gpu) out.add(c.gpus[part.gpu]);
      }
    }
  }
  return [...out];
}

/**
 * A training job's n GPUs on one node: the first node (in active-list order) with n active GPUs
 * that each fit a part; else the first node (by id) whose fitting active GPUs plus its pool GPUs
 * (in pool order; only those that fit when `filterPool`) number n, active ones first.
 */
export function trainingOnNode(c: ClusterState, inst: SchedInstance, req: number, lim: number, b: Bounds, filterPool: boolean): Placement | null {
  const n = inst.gpuNum;
  const maxMem = Math.max(...inst.memoryGb);
  const fitsAll = (g: Gpu) => fits(g, req, lim, maxMem, b, c.memGb);
  const byNode = new Map<number, Gpu[]>();
  for (const g of c.active) {
    if (!fitsAll(g)) continue;
    const list = byNode.get(g.node);
    if (list) list.push(g);
    else byNode.set(g.node, [g]);
  }
  let chosen: Gpu[] | undefined;
  for (const list of byNode.values()) {
    if (list.length >= n) {
      chosen = list.slice(0, n);
      break;
    }
  }
  if (!chosen) {
    const poolByNode = new Map<number, Gpu[]>();
    for (const g of c.pool) {
      if (filterPool && !fitsAll(g)) continue;
      const list = poolByNode.get(g.node);
      if (list) list.push(g);
      else poolByNode.set(g.node, [g]);
    }
    const nodes = c.gpus.length / c.gpusPerNode;
    for (let node = 0; node < nodes; node++) {
      const act = byNode.get(node) ?? [];
      const fresh = poolByNode.get(node) ?? [];
      if (act.length + fresh.length >= n) {
        chosen = act.concat(fresh.slice(0, n - act.length));
        break;
      }
    }
  }
  if (!chosen) return null;
  const parts = chosen.map((g, i) => ({ gpu: g.id, req, lim, mem: inst.memoryGb[i] ?? inst.memoryGb[0] }));
  return { parts, release: { req, lim } };
}
