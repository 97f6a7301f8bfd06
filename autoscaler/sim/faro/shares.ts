/**
 * Work-conserving CPU shares (cgroup `cpu.shares` ∝ the job's quota, `cpu.cfs_quota_us` = one CPU):
 * a busy replica runs at min(1, λ · quota), λ chosen so the busy replicas together use at most the
 * pool's capacity. A replica is guaranteed its quota whenever Σ pods × quota ≤ capacity (the
 * executor keeps that) and borrows what idle replicas leave. Speeds change only when a replica starts
 * or stops serving or a quota changes; each busy replica keeps its remaining work (seconds at speed
 * 1) and one pending completion, superseded (`dueAt`) when its speed changes.
 */
import type { EventQueue } from './event-queue';

export interface ShareReplica {
  readonly id: number;
  readonly job: number;
  work: number;
  speed: number;
  since: number;
  dueAt: number;
}

/** One pool per node: nodes of `nodeUnits` (the last the remainder), one node when it is left out. */
export function sharePools(
  q: EventQueue,
  capacity: number,
  nodeUnits: number | undefined,
  weight: (job: number) => number,
  serviceEvent: (id: number) => number,
): SharePool[] {
  const per = nodeUnits !== undefined && nodeUnits > 0 ? nodeUnits : capacity;
  const out: SharePool[] = [];
  for (let left = capacity; left > 1e-9; left -= per) out.push(new SharePool(q, Math.min(per, left), weight, serviceEvent));
  return out;
}

export class SharePool {
  private readonly busy: ShareReplica[] = [];
  private ws = new Float64Array(64);
  private capped = new Uint8Array(64);

  constructor(
    private readonly q: EventQueue,
    readonly capacity: number,
    private readonly weight: (job: number) => number,
    private readonly serviceEvent: (id: number) => number,
  ) {}

  /** Starts serving `work` seconds (at speed 1) on `r` at `now`. */
  start(r: ShareReplica, work: number, now: number): void {
    this.advance(now);
    r.work = work;
    r.since = now;
    r.speed = 0;
    r.dueAt = -1;
    this.busy.push(r);
    this.rebalance(now);
  }

  /** True when the event at `now` is `r`'s current completion (not a superseded one). */
  isDue(r: ShareReplica, now: number): boolean {
    return r.dueAt === now;
  }

  /** `r` finished at `now`. */
  stop(r: ShareReplica, now: number): void {
    this.advance(now);
    const i = this.busy.indexOf(r);
    if (i >= 0) {
      this.busy[i] = this.busy[this.busy.length - 1];
      this.busy.pop();
    }
    r.dueAt = -1;
    this.rebalance(now);
  }

  /** Weights changed (a quota decision). */
  reweigh(now: number): void {
    this.advance(now);
    this.rebalance(now);
  }

  /** Busy replicas now (tests). */
  get busyCount(): number {
    return this.busy.length;
  }

  private advance(now: number): void {
    for (const r of this.busy) {
      r.work = Math.max(0, r.work - r.speed * (now - r.since));
      r.since = now;
    }
  }

  /** Water-filling: speed = min(1, λ w), λ the largest with Σ speeds ≤ capacity. */
  private rebalance(now: number): void {
    const n = this.busy.length;
    if (n === 0) return;
    if (n > this.ws.length) {
      this.ws = new Float64Array(n * 2);
      this.capped = new Uint8Array(n * 2);
    }
    const ws = this.ws;
    const capped = this.capped;
    let wsum = 0;
    for (let i = 0; i < n; i++) {
      ws[i] = Math.max(1e-6, this.weight(this.busy[i].job));
      capped[i] = n <= this.capacity + 1e-9 ? 1 : 0;
      wsum += ws[i];
    }
    let cap = this.capacity;
    if (n > this.capacity + 1e-9) {
      // cap every replica whose share would pass 1, until none does (each round caps at least one or stops)
      for (let round = 0; round < n; round++) {
        const lam = cap / wsum;
        let changed = false;
        for (let i = 0; i < n; i++) {
          if (capped[i] === 0 && lam * ws[i] >= 1) {
            capped[i] = 1;
            cap -= 1;
            wsum -= ws[i];
            changed = true;
          }
        }
        if (!changed || wsum <= 0) break;
      }
    }
    const lam = wsum > 0 ? Math.max(0, cap) / wsum : 0;
    for (let i = 0; i < n; i++) {
      const r = this.busy[i];
      const s = capped[i] === 1 ? 1 : Math.min(1, lam * ws[i]);
      if (s === r.speed && r.dueAt >= 0) continue;
      r.speed = s;
      r.dueAt = s > 0 ? now + r.work / s : Infinity;
      if (s > 0) this.q.push(r.dueAt, this.serviceEvent(r.id));
    }
  }
}
