/**
 * Consolidation by migration for 'mlfaas-packed' (issue 24): a device held only by one function's
 * replicas, at low occupancy, is emptied by moving its replicas, each at its own (smShare, quota,
 * batch), to the fullest other devices in use that take it (best fit: join a slot first, then open
 * one). A move is counted honestly: the copy is a new replica (a cold start) and the original keeps
 * serving, and holding its device, until every replica of the function is ready; only then is it
 * removed. Pure: the plan is computed on a ClusterOverlay; the policy wrapper
 * (placement-packed-policy.ts) issues the moves and the drain.
 */
import { ClusterOverlay, freeSm, occupancy, slotQuota } from './cluster';
import { EPS } from './hybrid-params';
import { bestFitOrder } from './placement-packed';
import type { GpuView, Observation, Placement } from './types';

/** A planned migration: the device to empty, the replicas to drain from it, and their copies' placements. */
export interface MovePlan {
  from: string;
  drain: string[];
  add: Placement[];
}

/** Whether `g` takes one more replica at exactly (smShare, quota): by joining a slot of that SM share, by opening one, or not. */
export function takes(g: GpuView, smShare: number, quota: number, maxSmTypes: number, limit: number): 'join' | 'open' | undefined {
  if (occupancy(g) + smShare * quota > limit + EPS) return undefined;
  if (g.slots.some((sl) => Math.abs(sl.smShare - smShare) < EPS && 1 - slotQuota(sl) >= quota - EPS)) return 'join';
  return g.slots.length < maxSmTypes && freeSm(g) >= smShare - EPS ? 'open' : undefined;
}

/**
 * The move that takes `fn`'s replicas off the emptiest device they are on, if its occupancy is at
 * most `below` and every one of them fits on a FULLER device in use (not a new one; fuller, so
 * moves only ever go from emptier to fuller devices and cannot cycle); undefined else. A device
 * that other functions also hold empties once each of them has moved off it in its own decision.
 */
export function planMove(obs: Observation, fn: string, below: number, maxSmTypes: number, limit: number): MovePlan | undefined {
  const mine = new Map(obs.replicas.map((r) => [r.id, r]));
  const own = obs.cluster.gpus.filter((g) => g.slots.some((s) => s.members.some((m) => m.fn === fn && mine.has(m.replicaId))))
    .map((g) => ({ g, h: occupancy(g) })).filter((x) => x.h <= below + EPS).sort((a, b) => a.h - b.h);
  const src = own[0]?.g;
  if (!src) return undefined;
  const srcH = own[0].h;
  const overlay = new ClusterOverlay(obs.cluster);
  const drain: string[] = [];
  const add: Placement[] = [];
  for (const s of src.slots) {
    for (const m of s.members) {
      const r = mine.get(m.replicaId);
      if (!r || m.fn !== fn) continue;
      overlay.remove(r.id, src.id);
      const order = bestFitOrder(overlay, limit, (g) => g.id !== src.id && occupancy(g) > srcH + EPS);
      const joins = order.filter((g) => takes(g, s.smShare, m.quota, maxSmTypes, limit) === 'join');
      const opens = order.filter((g) => takes(g, s.smShare, m.quota, maxSmTypes, limit) === 'open').sort((a, b) => freeSm(a) - freeSm(b));
      const to = joins[0] ?? opens[0];
      if (!to) return undefined;
      overlay.place(`move-${r.id}`, fn, to.id, s.smShare, m.quota);
      drain.push(r.id);
      add.push({ gpu: to.id, smShare: s.smShare, quota: m.quota, batchSize: r.batchSize });
    }
  }
  return drain.length ? { from: src.id, drain, add } : undefined;
}

/** A placement on a new device moved to the fullest used device that takes it exactly (join first), else unchanged. */
export function packOnUsed(obs: Observation, a: Placement, maxSmTypes: number, limit: number): Placement {
  if (!a.gpu.startsWith('new:')) return a;
  const order = bestFitOrder(new ClusterOverlay(obs.cluster), limit, () => true);
  const to = order.find((g) => takes(g, a.smShare, a.quota, maxSmTypes, limit) === 'join') ??
    order.filter((g) => takes(g, a.smShare, a.quota, maxSmTypes, limit) === 'open').sort((x, y) => freeSm(x) - freeSm(y))[0];
  return to ? { ...a, gpu: to.id } : a;
}
