import type Redis from 'ioredis';
import { Lease } from '../../gateway/lib/lease';
import { FunctionRef } from '../../gateway/lib/names';
import { readSeconds } from '../../gateway/metrics/second-window';
import type { FunctionProvider, FunctionStatus } from '../../gateway/providers/function-provider';
import { parseMlSpec } from '../../gateway/registry/function-spec';
import { ScalingEvents } from '../../gateway/registry/scaling-events';
import { ProfileCapability } from '../inference/capability';
import '../inference/index';
import { createPolicy } from '../inference/registry';
import type { Decision, InferencePolicy, Placement, PolicyParams } from '../inference/types';
import { clusterView, defaultDevice, PlacedReplica, policySpec, targetReplicas, toObservation } from './observation';
import { PlacementBook } from './placements';

/** The only clock in the autoscaler; tests pass their own. */
export interface Clock {
  now(): number;
}
export const systemClock: Clock = { now: () => Date.now() };

export interface LiveAutoscalerOptions {
  /** Registered policy name, e.g. `hybrid`. */
  policy: string;
  params: PolicyParams;
  /** Tick period, ms (1000 live). */
  intervalMs: number;
  /** SLO assumed for functions that set none, ms. */
  defaultSloMs: number;
  /** The node's devices (`cpu0`… on a machine without a GPU: one per core). */
  devices: string[];
  leaseMs?: number;
  /** Called after every tick with what it decided (logs, tests). */
  onTick?: (reports: TickReport[], now: number) => void;
}

/** What one tick did, per function (for tests and logs). */
export interface TickReport {
  fn: string;
  decision?: Decision;
  skipped?: string;
}

const LOCK = 'mlfaas:autoscaler-lock';

/**
 * The live inference autoscaler: every interval, per inference function, it reads the last
 * second's counters from Redis and the replicas from the provider, asks the registered policy
 * (HAS-GPU hybrid by default) for a decision, and acts through the provider (replica count,
 * quotas, balancer weights). Every change is stored with its reason as a scaling event.
 * One leader at a time (Redis lease).
 */
export class LiveAutoscaler {
  private readonly capability = new ProfileCapability({});
  private readonly policy: InferencePolicy<unknown>;
  private readonly states = new Map<string, unknown>();
  private readonly profiled = new Map<string, string>();
  private readonly pending = new Map<string, Placement[]>();
  private readonly weights = new Map<string, number>();
  private readonly book: PlacementBook;
  private readonly events: ScalingEvents;
  private readonly lease: Lease;
  private timer?: NodeJS.Timeout;
  private running = false;

  constructor(
    private readonly redis: Redis,
    private readonly provider: FunctionProvider,
    private readonly opts: LiveAutoscalerOptions,
    private readonly clock: Clock = systemClock,
  ) {
    this.policy = createPolicy(opts.policy, opts.params, { capability: this.capability });
    this.book = new PlacementBook(redis);
    this.events = new ScalingEvents(redis);
    this.lease = new Lease(redis, LOCK, opts.leaseMs ?? 5000, async () => undefined, async () => undefined);
  }

  async start(): Promise<void> {
    await this.lease.start();
    this.timer = setInterval(() => {
      if (!this.lease.isHeld || this.running) return;
      this.running = true;
      const now = this.clock.now();
      void this.tick(now)
        .then((r) => this.opts.onTick?.(r, now))
        .catch(() => undefined)
        .finally(() => (this.running = false));
    }, this.opts.intervalMs);
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.lease.close();
  }

  /** One decision round over every inference function. */
  async tick(now: number): Promise<TickReport[]> {
    const fns = (await this.provider.list()).filter((f) => f.kind === 'inference');
    const all: Array<{ f: FunctionStatus; ref: FunctionRef; replicas: PlacedReplica[] }> = [];
    for (const f of fns) {
      const ref = { name: f.name, namespace: f.namespace };
      all.push({ f, ref, replicas: await this.placed(f, ref) });
    }
    const cluster = clusterView(this.opts.devices, all.flatMap((x) => x.replicas));
    const sec = Math.floor(now / 1000) - 1;
    const reports: TickReport[] = [];
    for (const { f, ref, replicas } of all) {
      const fnId = `${f.name}.${f.namespace}`;
      try {
        if (!(await this.ensureProfile(ref, fnId))) {
          reports.push({ fn: fnId, skipped: 'no capability profile yet' });
          continue;
        }
        const spec = policySpec(fnId, parseMlSpec(f.labels, f.annotations), this.opts.defaultSloMs);
        const counters = (await readSeconds(this.redis, ref, sec, sec)).get(sec);
        const obs = toObservation(counters, replicas, cluster, this.opts.intervalMs);
        const state = this.states.get(fnId) ?? this.policy.initialState(spec);
        const { decision, nextState } = this.policy.decide(spec, state, obs, now);
        await this.act(ref, f, replicas, decision, now);
        this.states.set(fnId, nextState); // only once acted on
        reports.push({ fn: fnId, decision });
      } catch (e) {
        // one function's failure (deleted mid-tick, Redis error) must not stop the others
        reports.push({ fn: fnId, skipped: `error: ${(e as Error).message}` });
      }
    }
    this.prune(new Set(all.map((x) => `${x.f.name}.${x.f.namespace}`)), new Set(all.flatMap((x) => x.replicas.map((r) => r.id))));
    return reports;
  }

  /** Forgets functions and replicas that are gone (a redeployed function starts afresh). */
  private prune(fns: Set<string>, replicas: Set<string>): void {
    for (const m of [this.states, this.profiled, this.pending]) for (const k of m.keys()) if (!fns.has(k)) m.delete(k);
    for (const k of this.weights.keys()) if (!replicas.has(k)) this.weights.delete(k);
  }

  /** Replicas with their spots; a replica without one takes the next planned placement. */
  private async placed(f: FunctionStatus, ref: FunctionRef): Promise<PlacedReplica[]> {
    const eps = (await this.provider.endpoints(ref)).filter((r) => r.state !== 'draining');
    const book = await this.book.read(ref);
    const fnId = `${f.name}.${f.namespace}`;
    const maxBatch = parseMlSpec(f.labels, f.annotations).maxBatchSize ?? 8;
    const out: PlacedReplica[] = [];
    for (const r of eps) {
      let spot = book[r.id];
      if (!spot) {
        const next = this.pending.get(fnId)?.shift();
        const gpu = next && !next.gpu.startsWith('new') ? next.gpu : defaultDevice(this.opts.devices, out);
        spot = { gpu, smShare: next?.smShare ?? 1, batchSize: next?.batchSize ?? maxBatch };
        await this.book.write(ref, r.id, spot);
        if (next && next.quota !== r.quota) {
          await this.provider.setQuota(ref, r.id, next.quota).catch(() => undefined);
          r.quota = next.quota;
        }
      }
      out.push({ id: r.id, fn: fnId, ready: r.state === 'ready', gpu: spot.gpu, smShare: spot.smShare, quota: r.quota, batchSize: spot.batchSize });
    }
    await this.book.prune(ref, new Set(eps.map((r) => r.id)));
    return out;
  }

  /** Loads (or refreshes) the function's deploy-time profile into the capability model. */
  private async ensureProfile(ref: FunctionRef, fnId: string): Promise<boolean> {
    const p = await this.provider.capability?.(ref);
    if (!p) return this.profiled.has(fnId);
    if (this.profiled.get(fnId) !== p.version) {
      this.capability.set(fnId, p.points.map((x) => ({ batch: x.batch, smShare: x.smShare, quota: x.quota, latencyMs: x.latencyMs })));
      this.profiled.set(fnId, p.version);
    }
    return true;
  }

  private async act(ref: FunctionRef, f: FunctionStatus, replicas: PlacedReplica[], d: Decision, now: number): Promise<void> {
    const time = new Date(now).toISOString();
    const base = { time, policy: this.policy.name, reason: d.reason };
    for (const q of d.quotas) {
      const r = replicas.find((x) => x.id === q.replicaId);
      if (!r || Math.abs(r.quota - q.quota) < 1e-6) continue;
      await this.provider.setQuota(ref, q.replicaId, q.quota).catch(() => undefined);
      await this.events.record(ref, { ...base, action: 'quota', replica: q.replicaId, from: r.quota, to: q.quota });
    }
    const fnId = `${f.name}.${f.namespace}`;
    // planned placements wait for the replicas the scale-up starts (at most the surplus asked for)
    if (d.add.length) this.pending.set(fnId, [...(this.pending.get(fnId) ?? []), ...d.add].slice(-Math.max(0, d.replicas - replicas.length)));
    const ml = parseMlSpec(f.labels, f.annotations);
    const target = targetReplicas(d.replicas, replicas.length, f.replicas, ml.minScale, ml.maxScale);
    if (target !== f.replicas) {
      await this.provider.scale(ref, target, d.remove);
      await this.events.record(ref, { ...base, action: 'replicas', from: f.replicas, to: target });
    }
    for (const [id, w] of Object.entries(d.weights)) {
      const last = this.weights.get(id);
      if (!(w > 0) || !replicas.some((r) => r.id === id) || (last !== undefined && Math.abs(last - w) < 0.02)) continue;
      await this.provider.setWeight(ref, id, w).catch(() => undefined);
      this.weights.set(id, w);
    }
  }
}
