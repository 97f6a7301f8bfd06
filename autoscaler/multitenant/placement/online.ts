import { fits, type ClusterState, type Gpu, type Part, type SchedInstance } from '../../reproductions/dilu/cluster';
import type { Placement } from '../../reproductions/dilu/select';

/**
 * Our online placement for the fixed GPU cluster (issue 24): the same per-GPU bounds as Dilu
 * (Σrequest ≤ Ω, Σlimit ≤ γ, memory ≤ total) and the same <request, limit> each instance asks
 * for, placed differently:
 * - every single-GPU instance (inference and LLM alike) goes to the active GPU that fits it and
 *   is left with the least free capacity, free capacity weighing memory and SM by how scarce each
 *   is in the whole cluster right now (`scarcity`), so the binding dimension is packed first;
 *   an LLM is never split over several GPUs (each part would book its full request again);
 * - a training job goes to the node whose fitting active GPUs leave the least free capacity,
 *   else to the node with the most active GPUs that fit (fewest new ones), then the lowest id;
 * - a new GPU is the pool's head (training: that node's pool GPUs).
 * GPUs in `exclude` (being drained by consolidation) take nothing new.
 */

export interface OursParams {
  readonly omega: number;
  readonly gamma: number;
  /** Weight of memory in the free-capacity score; undefined = from current scarcity. */
  readonly memWeight?: number;
  /** An LLM that fits no single active GPU may be split over at most this many GPUs of one node (0: never). */
  readonly maxSplit: number;
}

export const OURS_BOUNDS: OursParams = { omega: 1, gamma: 1.5, maxSplit: 4 };

/** Memory's weight from the cluster's booked totals: the dimension closer to full weighs more. */
export function scarcity(c: ClusterState, fixed?: number): number {
  if (fixed !== undefined) return fixed;
  let sm = 0;
  let mem = 0;
  for (const g of c.active) {
    sm += g.smReq;
    mem += g.mem / c.memGb;
  }
  const t = sm + mem;
  return t > 0 ? mem / t : 0.5;
}

/** Free capacity left on g after adding (req, mem): lower = tighter fit. */
export function leftover(g: Gpu, req: number, mem: number, memGb: number, w: number): number {
  return w * (1 - (g.mem + mem) / memGb) + (1 - w) * (1 - (g.smReq + req));
}

export function bestFit(c: ClusterState, req: number, lim: number, mem: number, p: OursParams, w: number, exclude: ReadonlySet<number>): Gpu | undefined {
  let best: Gpu | undefined;
  let bestS = Infinity;
  for (const g of c.active) {
    if (exclude.has(g.id) || !fits(g, req, lim, mem, p, c.memGb)) continue;
    const s = leftover(g, req, mem, c.memGb, w);
    if (s < bestS - 1e-12) {
      best = g;
      bestS = s;
    }
  }
  return best;
}

export function placeOurs(c: ClusterState, inst: SchedInstance, p: OursParams, exclude: ReadonlySet<number> = new Set()): Placement | null {
  const req = inst.smRequest;
  const lim = inst.smLimit;
  const release = { req, lim };
  const w = scarcity(c, p.memWeight);
  if (inst.type === 'training') return trainingNode(c, inst, p, w, exclude);
  const mem = inst.memoryGb[0];
  const g = bestFit(c, req, lim, mem, p, w, exclude);
  if (g) return { parts: [{ gpu: g.id, req, lim, mem }], release };
  if (inst.type === 'llm-inference' && p.maxSplit > 1) {
    const parts = splitFewest(c, req, lim, mem, p, w, exclude);
    if (parts) return { parts, release: { req, lim: req } };
  }
  const fresh = c.pool.find((x) => fits(x, req, lim, mem, p, c.memGb));
  return fresh ? { parts: [{ gpu: fresh.id, req, lim, mem }], release } : null;
}

/**
 * An LLM's memory split over one node's active GPUs that fit its SM (each part books request =
 * limit = r, as Dilu books them): the node needing the fewest parts (largest free memory first),
 * then the least free capacity left; at most `maxSplit` parts, none of them empty.
 */
export function splitFewest(c: ClusterState, req: number, lim: number, mem: number, p: OursParams, w: number, exclude: ReadonlySet<number>): Part[] | null {
  const byNode = new Map<number, Gpu[]>();
  for (const g of c.active) {
    if (exclude.has(g.id) || g.mem >= c.memGb || !fits(g, req, lim, 0, p, c.memGb)) continue;
    const l = byNode.get(g.node);
    if (l) l.push(g);
    else byNode.set(g.node, [g]);
  }
  let best: Part[] | null = null;
  let bestKey = [Infinity, Infinity];
  for (const l of byNode.values()) {
    const sorted = l.slice().sort((a, b) => a.mem - b.mem || a.id - b.id);
    const parts: Part[] = [];
    let left = mem;
    for (const g of sorted) {
      if (left <= 0 || parts.length >= p.maxSplit) break;
      const m = Math.min(c.memGb - g.mem, left);
      parts.push({ gpu: g.id, req, lim: req, mem: m });
      left -= m;
    }
    if (left > 0) continue;
    const slack = parts.reduce((a, x) => a + leftover(c.gpus[x.gpu], x.req, x.mem, c.memGb, w), 0);
    if (parts.length < bestKey[0] || (parts.length === bestKey[0] && slack < bestKey[1] - 1e-12)) {
      best = parts;
      bestKey = [parts.length, slack];
    }
  }
  return best;
}

function trainingNode(c: ClusterState, inst: SchedInstance, p: OursParams, w: number, exclude: ReadonlySet<number>): Placement | null {
  const n = inst.gpuNum;
  const req = inst.smRequest;
  const lim = inst.smLimit;
  const mem = Math.max(...inst.memoryGb);
  const act = new Map<number, Gpu[]>();
  for (const g of c.active) {
    if (exclude.has(g.id) || !fits(g, req, lim, mem, p, c.memGb)) continue;
    const l = act.get(g.node);
    if (l) l.push(g);
    else act.set(g.node, [g]);
  }
  let chosen: Gpu[] | undefined;
  let bestS = Infinity;
  for (const l of act.values()) {
    if (l.length < n) continue;
    const top = l.map((g) => ({ g, s: leftover(g, req, mem, c.memGb, w) })).sort((a, b) => a.s - b.s || a.g.id - b.g.id).slice(0, n);
    const s = top.reduce((a, x) => a + x.s, 0);
    if (s < bestS - 1e-12) {
      bestS = s;
      chosen = top.map((x) => x.g);
    }
  }
  if (!chosen) {
    const free = new Map<number, Gpu[]>();
    for (const g of c.pool) {
      const l = free.get(g.node);
      if (l) l.push(g);
      else free.set(g.node, [g]);
    }
    let most = -1;
    for (const node of [...free.keys()].sort((a, b) => a - b)) {
      const fresh = free.get(node)!;
      const a = act.get(node) ?? [];
      if (a.length + fresh.length < n) continue;
      const use = Math.min(a.length, n);
      if (use > most) {
        most = use;
        chosen = a.slice(0, use).concat(fresh.slice(0, n - use));
      }
    }
  }
  if (!chosen) return null;
  return { parts: chosen.map((g, i) => ({ gpu: g.id, req, lim, mem: inst.memoryGb[i] ?? mem })), release: { req, lim } };
}
