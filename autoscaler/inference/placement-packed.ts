/**
 * Our placement for the inference simulator (issue 24, Dilu section, "then ours"): the hybrid's
 * pipeline (forecast → SLO model → vertical → horizontal → hysteresis, unchanged) with replicas
 * packed by time quota instead of spread.
 *
 * - Footprint: a replica holds smShare × quota of its device (HAS-GPU's occupancy, cluster.ts
 *   `occupancy`), the same quantity Dilu books as its request.
 * - Best fit: a new replica goes to the FULLEST device in use that still takes it (the hybrid's
 *   default, HAS-GPU's, takes the emptiest), within the simulator's MPS slot rules
 *   (`newReplicaOptions`: join an SM slot with quota room or open one while SMs are free).
 * - Headroom: on a device in use, a new replica's quota is capped so that it can still grow by a
 *   factor (1 + h) in place (its slot keeps the room vertical scaling needs) and the device's
 *   occupancy after that growth stays within the HGO limit. h = the forecast's expected growth
 *   (R − observed)/observed, at most packHeadroom: the hybrid's own quantile forecast R says how
 *   far the function may rise before the next decision.
 * - Consolidation on scale-in: the replicas are handed to the hysteresis ordered by their device's
 *   occupancy, emptiest first, so among equally cheap removals (same SM share, readiness and quota:
 *   the hysteresis' own order, a stable sort) those on the emptiest devices go first and their
 *   devices empty. No replica is migrated (see the report: migration is not modelled here).
 *
 * The policy is placement-packed-policy.ts. The placement runs in the 'shared' SLO model's horizontal stage (stages/horizontal.ts,
 * `cheapestCover`) when `placement` is 'packed'; the default 'lowest' is the hybrid as before.
 */
import { ClusterOverlay, newReplicaOptions, occupancy, slotQuota } from './cluster';
import { EPS } from './hybrid-params';
import type { GpuView, Observation } from './types';

/** Devices in use with occupancy below `limit` that pass `ok`, fullest first (best fit); equal occupancy keeps the overlay's order. */
export function bestFitOrder(overlay: ClusterOverlay, limit: number, ok: (g: GpuView) => boolean): GpuView[] {
  const out: Array<{ g: GpuView; h: number }> = [];
  for (const g of overlay.gpus()) {
    const h = occupancy(g);
    if (h < limit - EPS && ok(g)) out.push({ g, h });
  }
  return out.sort((a, b) => b.h - a.h).map((x) => x.g);
}

/**
 * A new replica's options on device `g` with headroom `h`: each option's quota capped so that the
 * replica can grow ×(1 + h) within its slot and the device's occupancy, after that growth, stays
 * ≤ `limit`. Options left below `minQuota` are dropped. `join`: the option joins an SM slot already
 * there (it takes no SMs of its own; time-sharing a slot is the tightest packing), else it opens one.
 */
export function headroomOptions(g: GpuView, maxSmTypes: number, smGrid: number[], minQuota: number, h: number,
  limit: number): Array<{ smShare: number; maxQuota: number; join: boolean }> {
  const room = limit - occupancy(g);
  const joins = g.slots.filter((sl) => 1 - slotQuota(sl) >= minQuota - EPS).length;
  const out: Array<{ smShare: number; maxQuota: number; join: boolean }> = [];
  newReplicaOptions(g, maxSmTypes, smGrid, minQuota).forEach((o, i) => {
    const maxQuota = Math.min(o.maxQuota / (1 + h), room / (o.smShare * (1 + h)));
    if (maxQuota >= minQuota - EPS) out.push({ smShare: o.smShare, maxQuota, join: i < joins });
  });
  return out;
}

/** The headroom factor h: the forecast's expected growth (R − observed)/observed (observed at least 1 req/s), at most `cap`. */
export function forecastHeadroom(R: number, observed: number, cap: number): number {
  return Math.max(0, Math.min(cap, Math.max(0, R - observed) / Math.max(observed, 1)));
}

/** The observation with its replicas ordered by their device's occupancy, emptiest first (stable). */
export function consolidationOrder(obs: Observation): Observation {
  const h = new Map<string, number>(obs.cluster.gpus.map((g) => [g.id, occupancy(g)]));
  const at = (gpu: string) => h.get(gpu) ?? 0;
  const replicas = obs.replicas.map((r, i) => ({ r, i })).sort((a, b) => at(a.r.gpu) - at(b.r.gpu) || a.i - b.i).map((x) => x.r);
  return { ...obs, replicas };
}
