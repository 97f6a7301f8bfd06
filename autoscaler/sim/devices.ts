/**
 * The simulator's device ledger (issue 11): which replicas sit on each device, from placement until
 * their last batch is done, and the integral of devices held by any replica up to the end of the
 * trace (a provider bills whole devices). Replicas are the engine's own objects.
 */
export interface Held {
  gpu: string;
  smShare: number;
  quota: number;
  busy: boolean;
}

export class DeviceLedger<R extends Held> {
  private readonly on = new Map<string, Set<R>>();
  private at = 0;
  /** Device-seconds so far. */
  seconds = 0;
  /** Most devices held at once before the end of the trace. */
  peak = 0;

  /** @param endT the end of the trace: nothing is billed past it. */
  constructor(private readonly endT: number) {}

  /** Bills the devices held now up to `t`. */
  advance(t: number): void {
    const u = Math.min(t, this.endT);
    if (u > this.at) {
      this.seconds += this.on.size * (u - this.at);
      this.at = u;
    }
  }

  place(rep: R, t: number): void {
    this.advance(t);
    let set = this.on.get(rep.gpu);
    if (!set) this.on.set(rep.gpu, (set = new Set()));
    set.add(rep);
    if (t < this.endT && this.on.size > this.peak) this.peak = this.on.size;
  }

  unplace(rep: R, t: number): void {
    const set = this.on.get(rep.gpu);
    if (!set || !set.has(rep)) return;
    this.advance(t);
    set.delete(rep);
    if (set.size === 0) this.on.delete(rep.gpu);
  }

  /** Σ quota of rep's device neighbours busy now (what they claim of the device's tokend window). */
  busyQuota(rep: R): number {
    let q = 0;
    for (const x of this.on.get(rep.gpu) ?? []) if (x !== rep && x.busy) q += x.quota;
    return q;
  }

  /**
   * The quota rep's batch starting now runs at under `scope`, and what the device's busy replicas
   * (rep included) claim of its window in device time (Σ quota) and in SM-share-weighted units
   * (Σ smShare·quota). 'slot': rep's own quota. 'device' (tokend without MPS): q·min(1, 1/Σ quota).
   * 'occupancy' (tokend under MPS, the limiter charging device time × smShare): q·min(1, 1/Σ s·q).
   */
  grant(rep: R, scope: 'slot' | 'device' | 'occupancy' = 'slot'): { quota: number; claimed: number; occupied: number } {
    const claimed = rep.quota + this.busyQuota(rep);
    const occupied = rep.smShare * rep.quota + this.busyNeighbours(rep);
    const load = scope === 'device' ? claimed : scope === 'occupancy' ? occupied : 1;
    return { quota: load > 1 ? rep.quota / load : rep.quota, claimed, occupied };
  }

  /** Σ smShare·quota of rep's device neighbours busy now. */
  busyNeighbours(rep: R): number {
    let u = 0;
    for (const x of this.on.get(rep.gpu) ?? []) if (x !== rep && x.busy) u += x.smShare * x.quota;
    return u;
  }
}
