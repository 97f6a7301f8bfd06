/** Horizontal scale-up stages: new replicas, on the used device with the lowest occupancy (HGO) or a new one. */
import { freeSm, hasRoom, newReplicaOptions } from '../cluster';
import { Config, EPS, r6 } from '../hybrid-params';
import { bestFitOrder, forecastHeadroom, headroomOptions } from '../placement-packed';
import type { Candidate, CandidateList } from '../hybrid-fleet';
import type { FleetQueueModel, PerReplicaModel } from './slo-model';
import type { Draft, HorizontalStage, StageDeps } from './types';

/** Records a new replica in the draft. */
function place(d: Draft, gpu: string, c: { smShare: number; quota: number; batchSize: number }): void {
  d.overlay.place(`new-${d.add.length}`, d.fn, gpu, c.smShare, c.quota);
  d.add.push({ gpu, smShare: c.smShare, quota: c.quota, batchSize: c.batchSize });
  d.notes.push(`+replica on ${gpu} (s=${c.smShare}, q=${c.quota}, b=${c.batchSize})`);
}

/**
 * Per-replica models (Algorithm 1 lines 14-25): one replica for a gap dR on the used GPU with the
 * lowest HGO ('cheapest': the cheapest s·q covering dR; 'smax': the most capable option, then the
 * smallest quota step covering dR), else on a new GPU (RaPPbyThroughput). Returns its capability.
 */
export function replicaForGap({ p, quotaLevels }: StageDeps, model: PerReplicaModel): HorizontalStage {
  const { capOf, bestBatch, efficient } = model.tables;
  const addOne = (d: Draft, dR: number): number => {
    const { ctx, overlay } = d;
    const smGrid = ctx.smGrid;
    let target: { gpu: string; cfg: Config } | undefined;
    const minSm = smGrid[0] ?? 1;
    const bg = overlay.lowestOccupancy(p.hgoThreshold, (g) => hasRoom(g, p.maxSmTypes, minSm, p.minQuota));
    if (bg) {
      let cmax: Config | undefined;
      for (const o of newReplicaOptions(bg, p.maxSmTypes, smGrid, p.minQuota)) {
        const qmax = r6(Math.floor((o.maxQuota + EPS) / p.quotaStep) * p.quotaStep);
        if (qmax < p.minQuota - EPS) continue;
        const b = bestBatch(ctx, o.smShare, qmax);
        const c = capOf(ctx, b, o.smShare, qmax);
        if (!cmax || c > cmax.cap) cmax = { smShare: o.smShare, quota: qmax, batchSize: b, cap: c };
      }
      if (cmax && cmax.cap > dR && p.usedGpuConfig === 'cheapest') {
        // the cheapest (s·q) option on this GPU that covers dR, the most capable on equal cost
        let best: Config | undefined;
        let bestCost = Infinity;
        for (const o of newReplicaOptions(bg, p.maxSmTypes, smGrid, p.minQuota)) {
          for (const q of quotaLevels) {
            if (q > o.maxQuota + EPS) break;
            const cost = o.smShare * q;
            if (cost > bestCost + EPS) break;
            const b = bestBatch(ctx, o.smShare, q);
            const c = capOf(ctx, b, o.smShare, q);
            if (c >= dR && (cost < bestCost - EPS || (best && c > best.cap))) {
              best = { smShare: o.smShare, quota: q, batchSize: b, cap: c };
              bestCost = cost;
            }
          }
        }
        if (best) target = { gpu: bg.id, cfg: best };
      } else if (cmax && cmax.cap > dR) {
        // the smallest quota step that covers dR
        for (const q of quotaLevels) {
          if (q > cmax.quota + EPS) break;
          const c = capOf(ctx, cmax.batchSize, cmax.smShare, q);
          if (c >= dR) {
            target = { gpu: bg.id, cfg: { ...cmax, quota: q, cap: c } };
            break;
          }
        }
      } else if (cmax && cmax.cap > 0 && !overlay.base.canAddGpu) target = { gpu: bg.id, cfg: cmax };
    }
    if (!target && overlay.base.canAddGpu) {
      const cfg = efficient(ctx, dR);
      if (cfg) target = { gpu: overlay.newGpuId(), cfg };
    }
    if (!target) return 0;
    place(d, target.gpu, target.cfg);
    return target.cfg.cap;
  };
  return {
    toFloor(d) {
      // R_min / min_scale: at least one replica, always.
      while (d.replicas.length + d.add.length < d.floor) {
        const placed = d.add.length;
        const c = addOne(d, Math.max(d.R / p.alpha - d.Cf, 0));
        // nothing placed (no device has room, or the function has no profile to size a replica by)
        if (d.add.length === placed || (c <= 0 && d.add.length + d.replicas.length < d.floor && !d.overlay.base.canAddGpu)) break;
        d.Cf += c;
      }
    },
    out(d) {
      while (d.dR > 0 && d.replicas.length + d.add.length < d.spec.maxScale && d.add.length < p.maxNewPerTick) {
        const c = addOne(d, d.dR);
        if (c <= 0) {
          d.notes.push('no capacity for another replica');
          break;
        }
        d.dR -= c;
      }
    },
  };
}

/** sloModel 'shared': one new replica at a time, the cheapest that helps the shared queue fit T = R/α. */
export function cheapestCover({ p }: StageDeps, model: FleetQueueModel): HorizontalStage {
  const { fleetOf, fits, candidatesOf, onGpuCandidates, cheapestCover: cover } = model.fleet;
  const placeShared = (d: Draft, T: number): boolean => {
    const { ctx, overlay, spec, replicas, add, fleet } = d;
    const smGrid = ctx.smGrid;
    const f = fleetOf(ctx, fleet);
    const mMax = Math.max(1, Math.min(spec.maxScale - replicas.length - add.length, p.maxNewPerTick - add.length));
    let target: { gpu: string; cfg: Candidate } | undefined;
    const minSm = smGrid[0] ?? 1;
    if (p.placement === 'packed') return placePacked(d, T, f, mMax);
    const bg = overlay.lowestOccupancy(p.hgoThreshold, (g) => hasRoom(g, p.maxSmTypes, minSm, p.minQuota));
    let onBg: CandidateList | undefined;
    if (bg) {
      onBg = onGpuCandidates(ctx, newReplicaOptions(bg, p.maxSmTypes, smGrid, p.minQuota));
      // a used GPU when one replica there is enough (Algorithm 1 lines 15-22): the cheapest such
      const one = cover(ctx, f, T, 1, onBg);
      if (one && fits(ctx, { n: f.n + 1, mu: f.mu + one.cap, mu1: f.mu1 + one.cap1, lmax: Math.max(f.lmax, one.lat) }, T)) target = { gpu: bg.id, cfg: one };
    }
    if (!target && overlay.base.canAddGpu) {
      const cfg = cover(ctx, f, T, mMax, candidatesOf(ctx));
      if (cfg) target = { gpu: overlay.newGpuId(), cfg };
    }
    if (!target && bg && onBg) {
      const cfg = cover(ctx, f, T, mMax, onBg);
      if (cfg) target = { gpu: bg.id, cfg };
    }
    if (!target) return false;
    const { smShare, quota, batchSize } = target.cfg;
    place(d, target.gpu, target.cfg);
    fleet.push({ smShare, quota, batchSize });
    return true;
  };
  /**
   * placement 'packed' (ours, ../placement-packed.ts): the same three tries as above, each on the
   * fullest device in use that takes the replica with its forecast headroom (best fit), not the emptiest.
   */
  const placePacked = (d: Draft, T: number, f: ReturnType<typeof fleetOf>, mMax: number): boolean => {
    const { ctx, overlay, fleet } = d;
    const h = forecastHeadroom(d.R, d.rps, p.packHeadroom);
    const order = bestFitOrder(overlay, p.hgoThreshold, (g) => hasRoom(g, p.maxSmTypes, ctx.smGrid[0] ?? 1, p.minQuota));
    const opts = order.map((g) => ({ g, o: headroomOptions(g, p.maxSmTypes, ctx.smGrid, p.minQuota, h, p.hgoThreshold) }));
    const oneFits = (c: Candidate | undefined) => !!c && fits(ctx, { n: f.n + 1, mu: f.mu + c.cap, mu1: f.mu1 + c.cap1, lmax: Math.max(f.lmax, c.lat) }, T);
    let target: { gpu: string; cfg: Candidate } | undefined;
    // 1. join an SM slot (no SMs taken), fullest device first; 2. open a slot, on the device with the fewest free SMs that takes it
    const tries = [opts.map((x) => ({ g: x.g, o: x.o.filter((o) => o.join) })),
      opts.map((x) => ({ g: x.g, o: x.o.filter((o) => !o.join) })).sort((a, b) => freeSm(a.g) - freeSm(b.g))];
    for (const list of tries) {
      for (const x of list) {
        const one = x.o.length ? cover(ctx, f, T, 1, onGpuCandidates(ctx, x.o)) : undefined;
        if (one && oneFits(one)) {
          target = { gpu: x.g.id, cfg: one };
          break;
        }
      }
      if (target) break;
    }
    if (!target && overlay.base.canAddGpu) {
      const cfg = cover(ctx, f, T, mMax, candidatesOf(ctx));
      if (cfg) target = { gpu: overlay.newGpuId(), cfg };
    }
    for (const x of target ? [] : opts) {
      const cfg = x.o.length ? cover(ctx, f, T, mMax, onGpuCandidates(ctx, x.o)) : undefined;
      if (cfg) {
        target = { gpu: x.g.id, cfg };
        break;
      }
    }
    if (!target) return false;
    place(d, target.gpu, target.cfg);
    fleet.push({ smShare: target.cfg.smShare, quota: target.cfg.quota, batchSize: target.cfg.batchSize });
    return true;
  };
  return {
    toFloor(d) {
      const T = d.R / p.alpha;
      while (d.replicas.length + d.add.length < d.floor) if (!placeShared(d, T)) break;
    },
    out(d) {
      const T = d.R / p.alpha;
      while (!fits(d.ctx, fleetOf(d.ctx, d.fleet), T) && d.replicas.length + d.add.length < d.spec.maxScale && d.add.length < p.maxNewPerTick) {
        if (!placeShared(d, T)) {
          d.notes.push('no capacity for another replica');
          break;
        }
      }
    },
  };
}
