/**
 * The live runner of a fixed-cluster controller (issue 24): each tick it reads every inference
 * function (its replicas, per-second counters, capability profile and SLO labels), builds the
 * controller's ClusterView, calls the controller, keeps the decision within the cluster
 * (capacity.ts) and applies it through the provider: replica counts (`scale`), each replica's CPU
 * quota (`setQuota`, vertical) and the accept rate (the gateways' admission table,
 * gateway/proxy/admission.ts). With `lending` the quota is each replica's request and its limit is
 * one whole CPU, so a busy replica borrows what idle ones leave (lending.ts); without it
 * request = limit. Quotas are cores here and in the controllers; the provider is given (and
 * reports) fractions of each of the replica's cores (`ReplicaInfo.cores`), converted at the edge
 * (units.ts). Every change is a scaling event whose reason is the controller's (the trade-off in
 * words) and names the replica's request and limit.
 */
import type Redis from 'ioredis';
import type { FunctionRef } from '../../../gateway/lib/names';
import { readSeconds, SecondCounters } from '../../../gateway/metrics/second-window';
import type { FunctionProvider, FunctionStatus } from '../../../gateway/providers/function-provider';
import { type AcceptEntry, writeAcceptRates } from '../../../gateway/proxy/admission';
import { parseMlSpec, type MlSpec } from '../../../gateway/registry/function-spec';
import type { ReplicaInfo } from '../../../gateway/registry/registry';
import { ScalingEvent, ScalingEvents } from '../../../gateway/registry/scaling-events';
import type { ClusterController, ClusterView, ControllerDecision, JobView } from '../types';
import { coresOf, damp, fitCapacity, resolveTargets, Target } from './capacity';
import { jobView, MinuteBook, processingMsOf } from './view';
import { tradeOff } from './trade-off';
import { limitOf, limitStale, quotaWords } from './lending';
import { coreQuotaOf, coresOf as replicaCores, heldCores, providerLimit, providerQuota } from './units';

/** A reason that already names the utility before and after. */
const UTILITY_SAID = /utility \S+ → \S+/;

export interface ClusterRunnerOptions {
  /** Cores (CPU units) the functions share. */
  capacity: number;
  /** Tick period, ms (the admission entries outlive three of them). */
  intervalMs: number;
  /** SLO for functions that set none, ms. */
  defaultSloMs: number;
  /** Per-request time at quota 1 for a function with no capability profile yet, ms (default 100). */
  defaultProcessingMs?: number;
  /** Seconds of counters a job's rate and latency are read over (default 5). */
  windowS?: number;
  /**
   * Lend idle CPU (`MLFAAS_CLUSTER_LENDING`, lending.ts): every setQuota passes a limit of one CPU
   * (1 / the replica's cores), the quota stays the request (Σ replicas × quota ≤ capacity holds on
   * the requests). Default off.
   */
  lending?: boolean;
}

/** What one tick saw, decided and did (logs, tests). */
export interface ClusterTickReport {
  view: ClusterView;
  decision: ControllerDecision | null;
  /** The allocation in force after the tick, by function id (`name.namespace`). */
  applied: Record<string, Target>;
  /** The runner's own notes (clamps, capacity guard, a controller error). */
  notes: string[];
  /** Provider calls that failed. */
  errors: string[];
}

interface Item {
  f: FunctionStatus;
  ref: FunctionRef;
  fnId: string;
  ml: MlSpec;
  eps: ReplicaInfo[];
}

export class ClusterRunner {
  private readonly books = new Map<string, MinuteBook>();
  private readonly quotas = new Map<string, number>();
  private readonly accept = new Map<string, number>();
  /** The provider limit each replica was last given by this runner (request = limit: its quota), by replica id. */
  private readonly limits = new Map<string, number>();
  /** Why each function admits less than all (the decision that set it), for the 429's body. */
  private readonly reasons = new Map<string, string>();
  private readonly events: ScalingEvents;
  private lastTickMs?: number;

  constructor(
    private readonly redis: Redis,
    private readonly provider: FunctionProvider,
    readonly controller: ClusterController,
    private readonly opts: ClusterRunnerOptions,
  ) {
    this.events = new ScalingEvents(redis);
  }

  private get policy(): string {
    return `cluster:${this.controller.name}`;
  }

  async tick(nowMs: number): Promise<ClusterTickReport> {
    const windowS = this.opts.windowS ?? 5;
    const lastSec = Math.floor(nowMs / 1000) - 1;
    const tickS = this.lastTickMs === undefined ? 1 : Math.max(1, Math.round((nowMs - this.lastTickMs) / 1000));
    this.lastTickMs = nowMs;
    const fns = (await this.provider.list()).filter((x) => x.kind === 'inference');
    // every function's reads at once: a tick's round trips must not queue behind one another on a busy host
    const read = await Promise.all(fns.map(async (f) => {
      const ref = { name: f.name, namespace: f.namespace };
      const [eps, window, profile] = await Promise.all([
        this.provider.endpoints(ref),
        readSeconds(this.redis, ref, lastSec - windowS + 1, lastSec),
        this.provider.capability?.(ref),
      ]);
      return { f, ref, fnId: `${f.name}.${f.namespace}`, eps: eps.filter((r) => r.state !== 'draining'), window, profile };
    }));
    const items: Item[] = [];
    const jobs: JobView[] = [];
    for (const { f, ref, fnId, eps, window, profile } of read) {
      const book = this.books.get(fnId) ?? new MinuteBook();
      this.books.set(fnId, book);
      book.add(window, lastSec);
      // a function at zero with no work holds no core and is left out until a request wakes it
      if (f.replicas === 0 && eps.length === 0 && ![...window.values()].some((c) => c.arrivals > 0)) continue;
      const ml = parseMlSpec(f.labels, f.annotations);
      const processingMs = processingMsOf(profile) ?? this.opts.defaultProcessingMs ?? 100;
      // in cores; a replica holds at most one unit in the controllers' model (a new one at the provider's 1 may hold more)
      const quota = this.quotas.get(fnId) ?? (eps.length ? Math.min(1, eps.reduce((s, r) => s + coreQuotaOf(r), 0) / eps.length) : 1);
      items.push({ f, ref, fnId, ml, eps });
      jobs.push(jobView({ name: fnId, processingMs, sloMs: ml.sloLatencyMs ?? this.opts.defaultSloMs, sloPercentile: ml.sloPercentile,
        replicas: Math.max(f.replicas, 1), readyReplicas: eps.filter((r) => r.state === 'ready').length, quota, minuteCounts: book.counts(),
        window: window as ReadonlyMap<number, SecondCounters>, windowS, lastSec, tickS }));
    }
    this.forget(new Set(items.map((x) => x.fnId)), new Set(read.flatMap((x) => x.eps.map((r) => r.id))));
    const view: ClusterView = { nowS: nowMs / 1000, capacity: this.opts.capacity, jobs };
    const notes: string[] = [];
    let decision: ControllerDecision | null = null;
    try {
      decision = jobs.length ? this.controller.tick(view) : null;
    } catch (e) {
      notes.push(`controller ${this.controller.name} failed: ${(e as Error).message}`);
    }
    const bounds = items.map((x) => ({ minScale: x.ml.minScale, maxScale: x.ml.maxScale }));
    const resolved = resolveTargets(jobs, decision, bounds, items.map((x) => this.accept.get(x.fnId) ?? 1));
    notes.push(...resolved.notes);
    const fit = fitCapacity(damp(resolved.targets, jobs.map((j) => j.quota), this.opts.capacity), this.opts.capacity);
    if (fit.note) notes.push(fit.note);
    // every event names the trade-off: the controller's words where they do, else the runner's estimate first
    const held = items.map((x, i) => ({ replicas: jobs[i].replicas, quota: jobs[i].quota, acceptRate: this.accept.get(x.fnId) ?? 1 }));
    const said = decision?.reason ?? 'no decision';
    const words = UTILITY_SAID.test(said) ? said : `${tradeOff(jobs, held, fit.targets)} (runner's M/D/c estimate) — ${this.controller.name}: ${said}`;
    const reason = decision || fit.note ? [words, ...notes].join(' | ') : undefined;
    const errors = await this.apply(items, fit.targets, nowMs, reason);
    const applied: Record<string, Target> = {};
    items.forEach((x, i) => (applied[x.fnId] = fit.targets[i]));
    return { view, decision, applied, notes, errors };
  }

  /**
   * Applies the targets: everything that shrinks first (quotas down, replicas off, fewer accepted),
   * then what grows, so the cluster stays within its capacity between the two. Replicas at another
   * quota than their function's (new ones start at 1) are set every tick; only changes the decision
   * made are events (with `reason`), plus every failure.
   */
  private async apply(items: Item[], ts: Target[], nowMs: number, reason: string | undefined): Promise<string[]> {
    const errors: string[] = [];
    const time = new Date(nowMs).toISOString();
    const base = { time, policy: this.policy, reason: reason ?? 'a new replica at its function\'s quota' };
    const record = async (ref: FunctionRef, e: Omit<ScalingEvent, 'time' | 'policy' | 'reason'>, error: string | undefined, force = false, note = '') => {
      if (error) errors.push(`${ref.name}: ${e.action} → ${e.to}: ${error}`);
      if (reason || error || force) {
        await this.events.record(ref, { ...base, reason: base.reason + note, ...e, ...(error ? { error } : {}) }).catch(() => undefined);
      }
    };
    const limit = limitOf(this.opts.lending ?? false);
    // quota and limit in cores → the provider's fractions of each of the replica's cores
    const setQuota = async (ref: FunctionRef, r: ReplicaInfo, quota: number) => {
      const cores = replicaCores(r);
      const pq = providerQuota(quota, cores);
      const pl = providerLimit(limit, quota, cores);
      const error = await this.call(() => (pl === undefined ? this.provider.setQuota(ref, r.id, pq) : this.provider.setQuota(ref, r.id, pq, pl)));
      if (!error) this.limits.set(r.id, pl ?? pq);
      return error;
    };
    // fewer requests admitted takes effect first (the quickest lever, and it frees capacity): the
    // gateways read the table within half a second; more admitted waits for the capacity below
    await this.writeRates(items, items.map((x, i) => Math.min(ts[i].acceptRate, this.accept.get(x.fnId) ?? 1)), nowMs, reason, errors);
    for (const phase of ['shrink', 'grow'] as const) {
      const grows = (from: number, to: number) => (phase === 'grow' ? to > from + 1e-9 : to < from - 1e-9);
      await Promise.all(items.map(async ({ ref, fnId, f, eps }, i) => {
        const t = ts[i];
        // a scale-down stops the replicas listed last (newest): their quotas are left alone
        const staying = t.replicas < eps.length ? eps.slice(0, t.replicas) : eps;
        const leaving = eps.slice(staying.length).map((r) => r.id);
        // in cores: what the replica holds against what it would hold at the target (a pod of under one core holds less)
        const want = (r: ReplicaInfo) => heldCores(t.quota, replicaCores(r));
        await Promise.all(staying.filter((r) => grows(coreQuotaOf(r), want(r))).map(async (r) => {
          const error = await setQuota(ref, r, t.quota);
          await record(ref, { action: 'quota', replica: r.id, from: coreQuotaOf(r), to: t.quota }, error, false,
            ` | ${quotaWords(t.quota, limit, replicaCores(r))}`);
        }));
        // a replica whose quota stays but whose limit is not the cluster's (lending switched, a new
        // leader, a provider holding request = limit from before) gets it; no event unless it fails
        if (phase === 'grow') {
          await Promise.all(staying.filter((r) => Math.abs(coreQuotaOf(r) - want(r)) <= 1e-9 &&
            limitStale(this.limits.get(r.id) ?? limitOfReplica(r), t.quota, limit, replicaCores(r))).map(async (r) => {
            const error = await setQuota(ref, r, t.quota);
            const words = ` | ${quotaWords(t.quota, limit, replicaCores(r))}`;
            if (error) await record(ref, { action: 'quota', replica: r.id, from: t.quota, to: t.quota }, error, false, words);
          }));
        }
        if (phase === 'grow') this.quotas.set(fnId, t.quota);
        if (grows(f.replicas, t.replicas)) {
          const error = await this.call(() => this.provider.scale(ref, t.replicas, leaving.length ? leaving : undefined));
          await record(ref, { action: 'replicas', from: f.replicas, to: t.replicas }, error);
        }
        const was = this.accept.get(fnId) ?? 1;
        if (grows(was, t.acceptRate)) {
          this.accept.set(fnId, t.acceptRate);
          await record(ref, { action: 'accept-rate', from: was, to: t.acceptRate }, undefined, true);
        }
      }));
    }
    await this.writeRates(items, ts.map((t) => t.acceptRate), nowMs, reason, errors);
    return errors;
  }

  /** The gateways' admission table: an entry per function admitting less than all, renewed every tick. */
  private async writeRates(items: Item[], rates: number[], nowMs: number, reason: string | undefined, errors: string[]): Promise<void> {
    const ttl = Math.max(3 * this.opts.intervalMs, 5000);
    const retryAfterS = Math.max(1, Math.ceil(this.opts.intervalMs / 1000));
    const table: Record<string, AcceptEntry | null> = {};
    items.forEach((x, i) => {
      const rate = rates[i];
      const why = reason ?? this.reasons.get(x.fnId) ?? 'the cluster is full';
      if (rate < 1) this.reasons.set(x.fnId, why);
      table[x.fnId] = rate < 1 ? { rate, retryAfterS, reason: why, untilMs: nowMs + ttl } : null;
    });
    await writeAcceptRates(this.redis, table).catch((e: Error) => void errors.push(`accept rates: ${e.message}`));
  }

  private async call(f: () => Promise<void>): Promise<string | undefined> {
    try {
      await f();
      return undefined;
    } catch (e) {
      return (e as Error).message || String(e);
    }
  }

  /** Forgets functions and replicas that are gone (a redeployed one starts afresh). */
  private forget(live: Set<string>, replicas: Set<string>): void {
    for (const m of [this.books, this.quotas, this.accept, this.reasons]) for (const k of m.keys()) if (!live.has(k)) m.delete(k);
    for (const k of this.limits.keys()) if (!replicas.has(k)) this.limits.delete(k);
  }

  /** Σ replicas × quota of what the runner applied last (for logs). */
  static cores(r: ClusterTickReport): number {
    return coresOf(Object.values(r.applied));
  }
}

/** The limit a provider reports with a replica (the local provider merges its settings), if any: its own units. */
function limitOfReplica(r: ReplicaInfo): number | undefined {
  const l = (r as ReplicaInfo & { limit?: unknown }).limit;
  return typeof l === 'number' && l > 0 ? l : undefined;
}
