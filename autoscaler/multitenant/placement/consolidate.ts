import { type ClusterState, type Gpu, type Part } from '../../reproductions/dilu/cluster';
import type { Placement } from '../../reproductions/dilu/select';
import type { Move } from '../../sim/dilu-sched/simulator';
import { bestFit, splitFewest, type OursParams } from './online';

/**
 * Consolidation: after an event, drain GPUs whose every instance fits on the other active GPUs
 * (an LLM also split over one node's GPUs, as the online placement would). A move starts the
 * instance's new replica on its destination at once and drains the old one `moveS` (LLM: `llmMoveS`) later (the
 * simulator keeps both booked meanwhile), so a drain never needs a new GPU, and the drained GPU
 * returns to the pool when its last move ends. Training parts and split LLMs are not moved; a GPU
 * holding one is never drained. A draining GPU takes no new instance.
 */

export interface ConsolidateParams {
  /** Drain only GPUs whose weighted occupancy (memory and SM, as the online score weighs them) is below this. */
  readonly maxOccupancy: number;
  /** At most this many GPUs start draining after one event. */
  readonly drainsPerEvent: number;
  /** Seconds a move keeps both places booked (an inference replica's cold start). */
  readonly moveS: number;
  /** The same for an LLM replica (20–30 GB of weights to load). */
  readonly llmMoveS: number;
  /** At most this many GPUs (the least occupied first) are tried after one event. */
  readonly triesPerEvent: number;
}

export const CONSOLIDATE_DEFAULTS: ConsolidateParams = { maxOccupancy: 1, drainsPerEvent: 1, moveS: 10, llmMoveS: 30, triesPerEvent: 8 };

type Saved = Map<number, [number, number, number]>;

function add(c: ClusterState, parts: readonly Part[], saved: Saved): void {
  for (const x of parts) {
    const g = c.gpus[x.gpu];
    if (!saved.has(g.id)) saved.set(g.id, [g.smReq, g.smLim, g.mem]);
    g.smReq += x.req;
    g.smLim += x.lim;
    g.mem += x.mem;
  }
}

function restore(c: ClusterState, saved: Saved): void {
  for (const [id, [r, l, m]] of saved) {
    const g = c.gpus[id];
    g.smReq = r;
    g.smLim = l;
    g.mem = m;
  }
  saved.clear();
}

/**
 * Plans this event's drains; adds each drained GPU's id to `draining`. Plans on the cluster's
 * own counters and puts every value back before returning (the simulator books the moves).
 */
export function planDrains(c: ClusterState, p: OursParams, cp: ConsolidateParams, w: number, draining: Set<number>, moving: ReadonlySet<string>): Move[] {
  for (const id of draining) if (!c.gpus[id].on) draining.delete(id);
  const occ = (g: Gpu) => w * (g.mem / c.memGb) + (1 - w) * g.smReq;
  const movable = (g: Gpu) => {
    for (const name of g.held.keys()) {
      const pl = c.placed.get(name);
      if (!pl || pl.parts.length !== 1 || pl.inst.type === 'training' || moving.has(name) || name.includes('\u0000')) return false;
    }
    return true;
  };
  const cands = c.active
    .filter((g) => !draining.has(g.id))
    .map((g) => ({ g, o: occ(g) }))
    .filter((x) => x.o < cp.maxOccupancy)
    .sort((a, b) => a.o - b.o || a.g.id - b.g.id)
    .map((x) => x.g);
  const all: Saved = new Map();
  const touched = new Set<number>();
  const moves: Move[] = [];
  let drains = 0;
  let tries = 0;
  try {
    for (const g of cands) {
      if (drains >= cp.drainsPerEvent || tries >= cp.triesPerEvent) break;
      if (touched.has(g.id) || !movable(g)) continue;
      tries++;
      const mine: Saved = new Map();
      const exclude = new Set(draining).add(g.id);
      const plan: Move[] = [];
      const names = [...g.held.keys()].map((n) => c.placed.get(n)!).sort((a, b) => b.parts[0].mem - a.parts[0].mem);
      for (const pl of names) {
        const { req, lim, mem } = pl.parts[0];
        const h = bestFit(c, req, lim, mem, p, w, exclude);
        let to: Placement | null = h ? { parts: [{ gpu: h.id, req, lim, mem }], release: pl.release } : null;
        if (!to && pl.inst.type === 'llm-inference' && p.maxSplit > 1) {
          const parts = splitFewest(c, req, lim, mem, p, w, exclude);
          to = parts && { parts, release: { req, lim: req } };
        }
        if (!to) break;
        add(c, to.parts, mine);
        plan.push({ name: pl.inst.name, placement: to, durationS: pl.inst.type === 'llm-inference' ? cp.llmMoveS : cp.moveS });
      }
      const ok = plan.length === names.length;
      for (const [id, v] of mine) if (!all.has(id)) all.set(id, v);
      if (!ok) {
        restore(c, mine);
        continue;
      }
      draining.add(g.id);
      drains++;
      for (const m of plan) for (const x of m.placement.parts) touched.add(x.gpu);
      moves.push(...plan);
    }
  } finally {
    restore(c, all);
  }
  return moves;
}
