import type Redis from 'ioredis';
import type { FunctionRef } from '../../gateway/lib/names';
import { readSeconds } from '../../gateway/metrics/second-window';
import type { FunctionProvider, FunctionStatus } from '../../gateway/providers/function-provider';
import { MlSpec, parseMlSpec } from '../../gateway/registry/function-spec';
import { ManualPin, readPin } from '../../gateway/registry/manual-scale';
import type { ClusterView, Placement, QuotaChange } from '../inference/types';
import { mpsPercent } from '../../node-runtime/gpu-replica';
import { clusterView, Counters, defaultDevice, PlacedReplica } from './observation';
import { PlacementBook } from '../../gateway/registry/placements';

/** One inference function as read at the start of a tick. */
export interface Collected {
  f: FunctionStatus;
  ref: FunctionRef;
  fnId: string;
  ml: MlSpec;
  replicas: PlacedReplica[];
  /** The last complete second's counters. */
  counters?: Counters;
  /** Work in the current, still open second. */
  activeNow: boolean;
  pin?: ManualPin;
  /** Quotas planned for replicas that just appeared (the actuator applies them). */
  initial: QuotaChange[];
  /**
   * SM shares planned for replicas that just appeared at another share (only replicas whose share
   * the provider enforces report one): each is a replacement at the planned share, a cold start.
   */
  shares: ShareChange[];
}

/** A planned SM share for a replica running at another (enforced) share. */
export interface ShareChange {
  replicaId: string;
  smShare: number;
}

/** A replica as the provider lists it (what the collector reads of it). */
interface Listed {
  id: string;
  state: string;
  quota: number;
  /** The SM share it runs at, where the provider enforces one. */
  smShare?: number;
}

/**
 * The collector (Knative's split): reads the provider's functions and replicas, the placement book
 * and the per-second counters in Redis. It writes only the placement book (where a new replica
 * went); provider changes are the actuator's.
 */
export class Collector {
  private readonly book: PlacementBook;

  constructor(
    private readonly redis: Redis,
    private readonly provider: FunctionProvider,
    private readonly devices: string[],
    /** Placements the decider planned, waiting for the replicas a scale-up starts (by function id). */
    private readonly pending: Map<string, Placement[]>,
  ) {
    this.book = new PlacementBook(redis);
  }

  async collect(now: number): Promise<{ items: Collected[]; cluster: ClusterView }> {
    const fns = (await this.provider.list()).filter((f) => f.kind === 'inference');
    const sec = Math.floor(now / 1000) - 1;
    // First every function's replicas with the placements already booked, then placements for new replicas:
    // a replica nobody planned goes to the least occupied device of the whole node, which needs
    // every function's replicas (per function, a woken function landed on the core another
    // function's replica was using while the other core stayed idle: seen in bench:live).
    const read = [];
    for (const f of fns) {
      const ref = { name: f.name, namespace: f.namespace };
      read.push({ f, ref, fnId: `${f.name}.${f.namespace}`, ml: parseMlSpec(f.labels, f.annotations), ...(await this.booked(ref)) });
    }
    const everywhere: PlacedReplica[] = read.flatMap((x) => x.replicas.filter((r): r is PlacedReplica => r !== undefined));
    const items: Collected[] = [];
    for (const x of read) {
      const initial: QuotaChange[] = [];
      const shares: ShareChange[] = [];
      const replicas = await this.placeNew(x.ref, x.fnId, x.eps, x.replicas, everywhere, initial, shares);
      await this.book.prune(x.ref, new Set(x.eps.map((r) => r.id)));
      const secs = await readSeconds(this.redis, x.ref, sec, sec + 1);
      const cur = secs.get(sec + 1);
      const activeNow = !!cur && (cur.arrivals > 0 || cur.queue > 0 || cur.inflight > 0);
      items.push({ f: x.f, ref: x.ref, fnId: x.fnId, ml: x.ml, replicas, counters: secs.get(sec), activeNow, pin: await readPin(this.redis, x.ref), initial,
        shares });
    }
    return { items, cluster: clusterView(this.devices, items.flatMap((x) => x.replicas)) };
  }

  /** The function's replicas (draining ones left out), each with its booked placement or undefined. */
  private async booked(ref: FunctionRef): Promise<{ eps: Listed[]; replicas: Array<PlacedReplica | undefined> }> {
    const eps = (await this.provider.endpoints(ref)).filter((r) => r.state !== 'draining');
    const book = await this.book.read(ref);
    const fnId = `${ref.name}.${ref.namespace}`;
    const replicas = eps.map((r) => {
      const placement = book[r.id];
      // the share a replica runs at is what it reports where enforced (a replacement may be on its way), else the booked one
      return placement ? { id: r.id, fn: fnId, ready: r.state === 'ready', gpu: placement.gpu, smShare: r.smShare ?? placement.smShare, quota: r.quota,
        batchSize: placement.batchSize } : undefined;
    });
    return { eps, replicas };
  }

  /** Placements for replicas without one: the next planned placement, else the node's least occupied device. */
  private async placeNew(
    ref: FunctionRef,
    fnId: string,
    eps: Listed[],
    booked: Array<PlacedReplica | undefined>,
    everywhere: PlacedReplica[],
    initial: QuotaChange[],
    shares: ShareChange[],
  ): Promise<PlacedReplica[]> {
    const out: PlacedReplica[] = [];
    for (let i = 0; i < eps.length; i++) {
      const r = eps[i];
      const have = booked[i];
      if (have) {
        out.push(have);
        continue;
      }
      const next = this.pending.get(fnId)?.shift();
      const gpu = next && !next.gpu.startsWith('new') ? next.gpu : defaultDevice(this.devices, everywhere);
      // A replica nobody planned (the deploy's min_scale ones, a wake from zero) is modelled at batch 1:
      // the lowest-latency configuration, valid whenever any is. At the largest batch a heavy model's
      // full batch can exceed the SLO (image-classify: 8 at 381 ms against 200 ms), which the SLO
      // model reads as no capacity at all, and the hybrid added a replica beside every wake (bench:live).
      // The runtime batches dynamically up to mlfaas.batch.max, so under load it only does better.
      // The placement records the share the replica runs at where the provider reports one (MPS fixes it
      // at start: one started at another share keeps it until its replacement, a new replica, comes),
      // else the planned one.
      const placement = { gpu, smShare: r.smShare ?? next?.smShare ?? 1, batchSize: next?.batchSize ?? 1 };
      await this.book.write(ref, r.id, placement);
      if (next && next.quota !== r.quota) initial.push({ replicaId: r.id, quota: next.quota });
      // a share is fixed at a replica's start: one started at another share is replaced at the planned one
      if (next && r.smShare !== undefined && mpsPercent(next.smShare) !== mpsPercent(r.smShare)) shares.push({ replicaId: r.id, smShare: next.smShare });
      const placed = { id: r.id, fn: fnId, ready: r.state === 'ready', gpu: placement.gpu, smShare: placement.smShare, quota: r.quota,
        batchSize: placement.batchSize };
      everywhere.push(placed);
      out.push(placed);
    }
    return out;
  }
}
