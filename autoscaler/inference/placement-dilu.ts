/**
 * Dilu's Algorithm 1 (ASPLOS'25) as a placement of the inference simulator's resize stage: the
 * feasibility and SelectOptGPU score of the port in ../reproductions/dilu/ (select.ts, cluster.ts),
 * applied to the devices of a ClusterOverlay.
 *
 * Each replica books a request r and a limit l on its device: r = smShare·quota (Dilu's replicas run
 * at their profiled SM share with the whole time quota, so r is the profiler's SM share), l = min(1,
 * limitFactor·r) (the paper: 2 × the request), and `replicaMemGb` of memory. A device fits when
 * Σr + r ≤ Ω, Σl + l ≤ γ and memory + m ≤ memGb (and it still has the SM room the simulator's slot
 * model needs); among the fitting devices in use the lowest 0.6·(1 − Σr after) + 0.4·(1 − memory
 * after / memGb) wins (best fit, the first of equal scores), else a new device. The workload-affinity
 * step needs training jobs on the devices; the inference simulator has none, so it never fires (as
 * in the authors' simulator, where every service is unique).
 *
 * Memory: the simulator's profiles (RaPP V100) carry none. `replicaMemGb` (default 1.5 GB) is an
 * estimate for HAS-GPU's torchvision models, whose weights are 0.01-0.25 GB: a serving process's
 * footprint is dominated by the CUDA context and library workspaces. It is not a measurement.
 */
import { fits, type Gpu } from '../reproductions/dilu/cluster';
import { selectOpt, weightedScore } from '../reproductions/dilu/select';
import { ClusterOverlay, MAX_SM_PARTITIONS, newReplicaOptions } from './cluster';
import type { ReplicaConfig } from './decision-helpers';
import type { GpuView, Placement } from './types';

export const DILU_PLACEMENT_DEFAULTS = { omega: 1, gamma: 1.5, alpha: 0.6, beta: 0.4, memGb: 40, limitFactor: 2, replicaMemGb: 1.5 };

export type DiluPlacementParams = typeof DILU_PLACEMENT_DEFAULTS;

/** Memory of one replica of `fn`, GB (default: `replicaMemGb` for every function). */
export type MemoryOf = (fn: string) => number;

/** A replica's request: its SM share × its time quota (Dilu's: the profiled SM share at quota 1). */
export const requestOf = (smShare: number, quota: number): number => smShare * quota;

/** A replica's limit: limitFactor × its request, at most the whole device. */
export const limitOf = (request: number, limitFactor: number): number => Math.min(1, limitFactor * request);

/** The booked sums of a device (Σ request, Σ limit, memory) as Dilu's cluster keeps them; `id` is the index. */
export function bookedLoad(g: GpuView, id: number, p: DiluPlacementParams, memOf: MemoryOf): Gpu {
  let smReq = 0;
  let smLim = 0;
  let mem = 0;
  for (const s of g.slots) {
    for (const m of s.members) {
      const r = requestOf(s.smShare, m.quota);
      smReq += r;
      smLim += limitOf(r, p.limitFactor);
      mem += memOf(m.fn);
    }
  }
  return { id, node: 0, smReq, smLim, mem, on: true, held: new Map() };
}

/** Whether the simulator's slot model can take a replica of `cfg` on `g` (SM room or a slot to join). */
function slotRoom(g: GpuView, cfg: ReplicaConfig): boolean {
  return newReplicaOptions(g, MAX_SM_PARTITIONS, [cfg.smShare], cfg.quota)
    .some((o) => Math.abs(o.smShare - cfg.smShare) < 1e-9 && o.maxQuota >= cfg.quota - 1e-9);
}

/**
 * The device Algorithm 1 picks for one replica of `fn` at `cfg` among the overlay's devices in use
 * (their order breaks ties), or undefined when none fits.
 */
export function selectDevice(overlay: ClusterOverlay, fn: string, cfg: ReplicaConfig, p: DiluPlacementParams, memOf: MemoryOf): GpuView | undefined {
  const views = overlay.gpus();
  const cands: Gpu[] = [];
  views.forEach((g, i) => {
    if (slotRoom(g, cfg)) cands.push(bookedLoad(g, i, p, memOf));
  });
  const req = requestOf(cfg.smShare, cfg.quota);
  const best = selectOpt(cands, req, limitOf(req, p.limitFactor), memOf(fn), p, p.memGb, weightedScore(p.alpha, p.beta, p.memGb));
  return best && views[best.id];
}

/**
 * Places `count` replicas of `fn` at `cfg` by Algorithm 1, one at a time (each sees the ones before
 * it): the best-fit device in use, else a new one while the cluster may grow; a replica that does
 * not fit even a new device (request > Ω, limit > γ or memory > memGb) is not placed.
 */
export function placeDilu(overlay: ClusterOverlay, fn: string, cfg: ReplicaConfig, count: number, p: DiluPlacementParams = DILU_PLACEMENT_DEFAULTS,
  memOf: MemoryOf = () => p.replicaMemGb): Placement[] {
  const out: Placement[] = [];
  const smShare = cfg.exclusive ? 1 : cfg.smShare;
  const quota = cfg.exclusive ? 1 : cfg.quota;
  const one = { ...cfg, smShare, quota };
  const req = requestOf(smShare, quota);
  const empty: Gpu = { id: -1, node: 0, smReq: 0, smLim: 0, mem: 0, on: false, held: new Map() };
  if (!fits(empty, req, limitOf(req, p.limitFactor), memOf(fn), p, p.memGb)) return out;
  for (let k = 0; k < count; k++) {
    let gpu = selectDevice(overlay, fn, one, p, memOf)?.id;
    if (!gpu) {
      if (!overlay.base.canAddGpu) break;
      gpu = overlay.newGpuId();
    }
    overlay.place(`pending-dilu-${k}`, fn, gpu, smShare, quota);
    out.push({ gpu, smShare, quota, batchSize: cfg.batchSize });
  }
  return out;
}

/** A placement stage (stages/resize.ts) running Algorithm 1 with `p`. */
export function diluPlacement(p: DiluPlacementParams = DILU_PLACEMENT_DEFAULTS, memOf?: MemoryOf) {
  return (overlay: ClusterOverlay, fn: string, cfg: ReplicaConfig, count: number): Placement[] => placeDilu(overlay, fn, cfg, count, p, memOf);
}
