import type Redis from 'ioredis';
import type { FunctionRef } from '../../gateway/lib/names';
import { readSeconds } from '../../gateway/metrics/second-window';
import type { FunctionProvider, FunctionStatus } from '../../gateway/providers/function-provider';
import { MlSpec, parseMlSpec } from '../../gateway/registry/function-spec';
import { ManualPin, readPin } from '../../gateway/registry/manual-scale';
import type { ClusterView, Placement, QuotaChange } from '../inference/types';
import { clusterView, Counters, defaultDevice, PlacedReplica } from './observation';
import { PlacementBook } from './placements';

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
    const items: Collected[] = [];
    for (const f of fns) {
      const ref = { name: f.name, namespace: f.namespace };
      const fnId = `${f.name}.${f.namespace}`;
      const ml = parseMlSpec(f.labels, f.annotations);
      const initial: QuotaChange[] = [];
      const replicas = await this.placed(ref, fnId, initial);
      const secs = await readSeconds(this.redis, ref, sec, sec + 1);
      const cur = secs.get(sec + 1);
      const activeNow = !!cur && (cur.arrivals > 0 || cur.queue > 0 || cur.inflight > 0);
      items.push({ f, ref, fnId, ml, replicas, counters: secs.get(sec), activeNow, pin: await readPin(this.redis, ref), initial });
    }
    return { items, cluster: clusterView(this.devices, items.flatMap((x) => x.replicas)) };
  }

  /** Replicas with their spots; a replica without one takes the next planned placement. */
  private async placed(ref: FunctionRef, fnId: string, initial: QuotaChange[]): Promise<PlacedReplica[]> {
    const eps = (await this.provider.endpoints(ref)).filter((r) => r.state !== 'draining');
    const book = await this.book.read(ref);
    const out: PlacedReplica[] = [];
    for (const r of eps) {
      let spot = book[r.id];
      if (!spot) {
        const next = this.pending.get(fnId)?.shift();
        const gpu = next && !next.gpu.startsWith('new') ? next.gpu : defaultDevice(this.devices, out);
        // A replica nobody planned (the deploy's min_scale ones, a wake from zero) is modelled at batch 1:
        // the lowest-latency configuration, valid whenever any is. At the largest batch a heavy model's
        // full batch can exceed the SLO (image-classify: 8 at 381 ms against 200 ms), which the SLO
        // model reads as no capacity at all, and the hybrid added a replica beside every wake (bench:live).
        // The runtime batches dynamically up to mlfaas.batch.max, so under load it only does better.
        spot = { gpu, smShare: next?.smShare ?? 1, batchSize: next?.batchSize ?? 1 };
        await this.book.write(ref, r.id, spot);
        if (next && next.quota !== r.quota) initial.push({ replicaId: r.id, quota: next.quota });
      }
      out.push({ id: r.id, fn: fnId, ready: r.state === 'ready', gpu: spot.gpu, smShare: spot.smShare, quota: r.quota, batchSize: spot.batchSize });
    }
    await this.book.prune(ref, new Set(eps.map((r) => r.id)));
    return out;
  }
}
