import { ClusterView, Decision, GpuView, SmSlot } from './types';

const EPS = 1e-9;

/**
 * SM partitions a device may hold: MPS's client limit on Volta and later (48). Every replica is its
 * own MPS client with its own limiter quota, so no fewer "rows" are needed (HAS-GPU's controller
 * keeps 2, FaST-GShare's rows; the hybrid's `maxSmTypes: 2` reproduces that).
 */
export const MAX_SM_PARTITIONS = 48;

/** HAS GPU Occupancy (HGO): Σ smShare·quota over every replica on the device. */
export function occupancy(g: GpuView): number {
  let h = 0;
  for (const s of g.slots) for (const m of s.members) h += s.smShare * m.quota;
  return h;
}

/** Σ quota of a slot's members, leaving out `exceptId`. */
export function slotQuota(s: SmSlot, exceptId?: string): number {
  let q = 0;
  for (const m of s.members) if (m.replicaId !== exceptId) q += m.quota;
  return q;
}

/** SMs not yet given to a slot. */
export function freeSm(g: GpuView): number {
  let s = 0;
  for (const sl of g.slots) s += sl.smShare;
  return Math.max(0, 1 - s);
}

const indexes = new WeakMap<GpuView[], Map<string, GpuView>>();

/**
 * Device by id through an index built once per `gpus` array (a view must replace its array, not
 * push to it, between decisions — `applyDecision` does).
 */
export function gpuById(view: ClusterView, id: string): GpuView | undefined {
  let m = indexes.get(view.gpus);
  if (!m || m.size !== view.gpus.length) {
    m = new Map(view.gpus.map((g) => [g.id, g]));
    indexes.set(view.gpus, m);
  }
  return m.get(id);
}

const byHgo = new WeakMap<GpuView[], Array<{ h: number; g: GpuView }>>();

/** Devices in use sorted by occupancy, ascending; computed once per `gpus` array. */
export function sortedByOccupancy(view: ClusterView): Array<{ h: number; g: GpuView }> {
  let l = byHgo.get(view.gpus);
  if (!l || l.length !== view.gpus.length) {
    l = view.gpus.map((g) => ({ h: occupancy(g), g })).sort((a, b) => a.h - b.h);
    byHgo.set(view.gpus, l);
  }
  return l;
}

/** Whether a new replica could join a slot or open one on `g`. */
export function hasRoom(g: GpuView, maxSmTypes: number, minSm: number, minQuota: number): boolean {
  if (g.slots.length < maxSmTypes && freeSm(g) >= minSm - EPS) return true;
  for (const s of g.slots) if (1 - slotQuota(s) >= minQuota - EPS) return true;
  return false;
}

/**
 * A copy-on-write working copy of the cluster: policies plan placements on it without touching
 * the observation; only the devices they change are copied.
 */
export class ClusterOverlay {
  private readonly changed = new Map<string, GpuView>();
  private readonly byReplica = new Map<string, string>();
  private added = 0;

  constructor(readonly base: ClusterView) {}

  gpus(): GpuView[] {
    const out: GpuView[] = [];
    for (const g of this.base.gpus) out.push(this.changed.get(g.id) ?? g);
    for (const [id, g] of this.changed) if (id.startsWith('new:')) out.push(g);
    return out.filter((g) => g.slots.some((s) => s.members.length > 0));
  }

  get(id: string): GpuView | undefined {
    return this.changed.get(id) ?? gpuById(this.base, id);
  }

  /**
   * The device with the lowest occupancy below `limit` that passes `ok`: the first unchanged one
   * in the shared sorted order, compared with the overlay's own copies.
   */
  lowestOccupancy(limit: number, ok: (g: GpuView) => boolean): GpuView | undefined {
    let best: GpuView | undefined;
    let bestH = Infinity;
    for (const { h, g } of sortedByOccupancy(this.base)) {
      if (h >= limit) break;
      if (this.changed.has(g.id)) continue;
      if (ok(g)) {
        best = g;
        bestH = h;
        break;
      }
    }
    for (const g of this.changed.values()) {
      if (g.slots.length === 0) continue;
      const h = occupancy(g);
      if (h < bestH && h < limit && ok(g)) {
        best = g;
        bestH = h;
      }
    }
    return best;
  }

  /** Device id and slot index of a replica, or undefined. */
  locate(replicaId: string, hintGpu?: string): { gpu: GpuView; slot: number } | undefined {
    const candidates = hintGpu ? [this.get(hintGpu)] : this.gpus();
    for (const g of candidates) {
      if (!g) continue;
      for (let i = 0; i < g.slots.length; i++) if (g.slots[i].members.some((m) => m.replicaId === replicaId)) return { gpu: g, slot: i };
    }
    return undefined;
  }

  /** Quota a replica could reach: 1 − the other members' quotas in its SM slot. */
  maxQuotaFor(replicaId: string, gpu: string): number {
    const at = this.locate(replicaId, gpu);
    if (!at) return 1;
    return Math.max(0, 1 - slotQuota(at.gpu.slots[at.slot], replicaId));
  }

  private mutable(id: string): GpuView {
    let g = this.changed.get(id);
    if (!g) {
      const b = gpuById(this.base, id);
      g = b ? { id, slots: b.slots.map((s) => ({ smShare: s.smShare, members: s.members.map((m) => ({ ...m })) })) } : { id, slots: [] };
      this.changed.set(id, g);
    }
    return g;
  }

  setQuota(replicaId: string, gpu: string, quota: number): void {
    const g = this.mutable(gpu);
    for (const s of g.slots) for (const m of s.members) if (m.replicaId === replicaId) m.quota = quota;
  }

  remove(replicaId: string, gpu: string): void {
    const g = this.mutable(gpu);
    for (const s of g.slots) s.members = s.members.filter((m) => m.replicaId !== replicaId);
    g.slots = g.slots.filter((s) => s.members.length > 0);
  }

  /** A placeholder id for a device not yet taken. */
  newGpuId(): string {
    return `new:${this.added++}`;
  }

  /** Puts a replica into a slot of `smShare` on `gpu` (joining one with room, or opening one). */
  place(replicaId: string, fn: string, gpu: string, smShare: number, quota: number): void {
    const g = this.mutable(gpu);
    const slot = g.slots.find((s) => Math.abs(s.smShare - smShare) < EPS && slotQuota(s) + quota <= 1 + EPS);
    if (slot) slot.members.push({ replicaId, fn, quota });
    else g.slots.push({ smShare, members: [{ replicaId, fn, quota }] });
    this.byReplica.set(replicaId, gpu);
  }
}

/** Options for a new replica on a used device under SM alignment: join a slot or open one. */
export function newReplicaOptions(g: GpuView, maxSmTypes: number, smGrid: number[], minQuota: number): Array<{ smShare: number; maxQuota: number }> {
  const out: Array<{ smShare: number; maxQuota: number }> = [];
  for (const s of g.slots) {
    const room = 1 - slotQuota(s);
    if (room >= minQuota - EPS) out.push({ smShare: s.smShare, maxQuota: room });
  }
  if (g.slots.length < maxSmTypes) {
    const free = freeSm(g);
    for (const s of smGrid) if (s <= free + EPS) out.push({ smShare: s, maxQuota: 1 });
  }
  return out;
}

/**
 * Applies a decision to a cluster view (what the loop does after acting): quota changes, removals
 * and placements. `ids` are the new replicas' ids in `decision.add` order; `gpuIds` maps "new:k"
 * placeholders to real device ids (allocated by `allocate` when missing).
 */
export function applyDecision(
  cluster: ClusterView,
  fn: string,
  replicaGpu: (replicaId: string) => string | undefined,
  decision: Decision,
  ids: string[],
  allocate: () => string,
  gpuIds: Map<string, string> = new Map(),
): void {
  const find = (id: string) => gpuById(cluster, id);
  for (const q of decision.quotas) {
    const g = find(replicaGpu(q.replicaId) ?? '');
    if (g) for (const s of g.slots) for (const m of s.members) if (m.replicaId === q.replicaId) m.quota = q.quota;
  }
  for (const id of decision.remove) {
    const g = find(replicaGpu(id) ?? '');
    if (!g) continue;
    for (const s of g.slots) s.members = s.members.filter((m) => m.replicaId !== id);
    g.slots = g.slots.filter((s) => s.members.length > 0);
  }
  cluster.gpus = cluster.gpus.filter((g) => g.slots.length > 0);
  decision.add.forEach((p, k) => {
    let gid = p.gpu;
    if (gid.startsWith('new:')) {
      if (!gpuIds.has(gid)) gpuIds.set(gid, allocate());
      gid = gpuIds.get(gid)!;
    }
    let g = find(gid);
    if (!g) {
      g = { id: gid, slots: [] };
      cluster.gpus = [...cluster.gpus, g];
    }
    const slot = g.slots.find((s) => Math.abs(s.smShare - p.smShare) < EPS && slotQuota(s) + p.quota <= 1 + EPS);
    if (slot) slot.members.push({ replicaId: ids[k], fn, quota: p.quota });
    else g.slots.push({ smShare: p.smShare, members: [{ replicaId: ids[k], fn, quota: p.quota }] });
  });
}
