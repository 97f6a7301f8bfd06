import type { FunctionRef } from '../../gateway/lib/names';
import type { FunctionProvider } from '../../gateway/providers/function-provider';
import { ScalingEvent, ScalingEvents } from '../../gateway/registry/scaling-events';
import type { Decision, QuotaChange } from '../inference/types';
import type { RequestLimit } from '../../gateway/providers/capability-profile';
import type { PlacedReplica } from './observation';
import type { ShareChange } from './collector';

/** What one provider call did. */
export interface Outcome {
  action: 'replicas' | 'quota' | 'weight' | 'sm-share';
  replica?: string;
  to: number;
  ok: boolean;
  error?: string;
}

/**
 * The actuator: applies a decision through the provider and records what actually happened. A
 * failed call is recorded as a failed event with its error (the change did not happen), never as a
 * change; the replica's known quota is updated only on success.
 */
export class Actuator {
  private readonly weights = new Map<string, number>();
  /** The limit each replica was last given with its quota (undefined: request = limit). */
  private readonly limits = new Map<string, number | undefined>();

  constructor(
    private readonly provider: FunctionProvider,
    private readonly events: ScalingEvents,
    private readonly policy: string,
  ) {}

  /**
   * The limit that goes with quota `q` (the request): the profiled <request, limit> ratio (Dilu:
   * limit = 2 × request) applied to `q`, capped at 1; undefined (request = limit) without a profile
   * that has one.
   */
  private async limitFor(ref: FunctionRef, q: number): Promise<number | undefined> {
    const rl = (await this.provider.capability?.(ref).catch(() => undefined))?.requestLimit;
    return limitForQuota(q, rl);
  }

  private async setQuota(ref: FunctionRef, replicaId: string, q: number, known?: number): Promise<string | undefined> {
    const limit = known ?? (await this.limitFor(ref, q));
    const error = await this.call(() => (limit === undefined ? this.provider.setQuota(ref, replicaId, q) : this.provider.setQuota(ref, replicaId, q, limit)));
    if (!error) this.limits.set(replicaId, limit);
    return error;
  }

  /**
   * Gives replicas whose quota stays the limit that now goes with it, e.g. once a profile with a
   * <request, limit> arrived after they were sized (decisions carry only quota changes). No events:
   * the quota, what the policy decided, does not change. Returns the replicas updated.
   */
  async refreshLimits(ref: FunctionRef, replicas: readonly PlacedReplica[]): Promise<string[]> {
    const rl = (await this.provider.capability?.(ref).catch(() => undefined))?.requestLimit;
    const done: string[] = [];
    for (const r of replicas) {
      const limit = limitForQuota(r.quota, rl);
      if (limit === undefined || (this.limits.has(r.id) && this.limits.get(r.id) === limit)) continue;
      if (!(await this.setQuota(ref, r.id, r.quota, limit))) done.push(r.id);
    }
    return done;
  }

  private async call(f: () => Promise<void>): Promise<string | undefined> {
    try {
      await f();
      return undefined;
    } catch (e) {
      return (e as Error).message || String(e);
    }
  }

  private async record(ref: FunctionRef, e: ScalingEvent, out: Outcome[], o: Outcome): Promise<void> {
    out.push(o);
    await this.events.record(ref, o.error ? { ...e, error: o.error } : e);
  }

  /**
   * Quotas planned for replicas that just appeared; only failures are events (the plan's event was
   * the scale-up). Planned SM shares of replicas started at another share are events: each is a
   * replacement replica (a cold start), where the provider enforces shares at all.
   */
  async initial(ref: FunctionRef, replicas: PlacedReplica[], changes: QuotaChange[], now: number, shares: ShareChange[] = []): Promise<Outcome[]> {
    const out: Outcome[] = [];
    for (const s of shares) {
      if (!this.provider.setSmShare) break;
      const r = replicas.find((x) => x.id === s.replicaId)!;
      const error = await this.call(async () => void (await this.provider.setSmShare?.(ref, s.replicaId, s.smShare)));
      const reason = 'planned SM share of a new replica: fixed at start, so a replacement starts at it (a cold start) and this one retires';
      await this.record(ref, { time: new Date(now).toISOString(), policy: this.policy, action: 'sm-share', replica: s.replicaId, from: r.smShare, to: s.smShare,
        reason }, out, { action: 'sm-share', replica: s.replicaId, to: s.smShare, ok: !error, error });
    }
    for (const q of changes) {
      const r = replicas.find((x) => x.id === q.replicaId)!;
      const error = await this.setQuota(ref, q.replicaId, q.quota);
      if (!error) r.quota = q.quota;
      else await this.record(ref, { time: new Date(now).toISOString(), policy: this.policy, action: 'quota', replica: q.replicaId, from: r.quota, to: q.quota,
        reason: 'planned quota of a new replica' }, out, { action: 'quota', replica: q.replicaId, to: q.quota, ok: false, error });
    }
    return out;
  }

  /** Applies `d`: quotas, then the replica count `target` (already clamped), then weights. */
  async apply(ref: FunctionRef, desired: number, replicas: PlacedReplica[], d: Decision, target: number, now: number): Promise<Outcome[]> {
    const out: Outcome[] = [];
    const base = { time: new Date(now).toISOString(), policy: this.policy, reason: d.reason };
    for (const q of d.quotas) {
      const r = replicas.find((x) => x.id === q.replicaId);
      if (!r || Math.abs(r.quota - q.quota) < 1e-6) continue;
      const error = await this.setQuota(ref, q.replicaId, q.quota);
      await this.record(ref, { ...base, action: 'quota', replica: q.replicaId, from: r.quota, to: q.quota }, out,
        { action: 'quota', replica: q.replicaId, to: q.quota, ok: !error, error });
      if (!error) r.quota = q.quota;
    }
    if (target !== desired) {
      const error = await this.call(() => this.provider.scale(ref, target, d.remove));
      await this.record(ref, { ...base, action: 'replicas', from: desired, to: target }, out, { action: 'replicas', to: target, ok: !error, error });
    }
    for (const [id, w] of Object.entries(d.weights)) {
      const last = this.weights.get(id);
      if (!(w > 0) || !replicas.some((r) => r.id === id) || (last !== undefined && Math.abs(last - w) < 0.02)) continue;
      const error = await this.call(() => this.provider.setWeight(ref, id, w));
      out.push({ action: 'weight', replica: id, to: w, ok: !error, error });
      if (!error) this.weights.set(id, w);
    }
    return out;
  }

  /** Forgets weights and limits of replicas that are gone. */
  prune(live: ReadonlySet<string>): void {
    for (const k of this.weights.keys()) if (!live.has(k)) this.weights.delete(k);
    for (const k of this.limits.keys()) if (!live.has(k)) this.limits.delete(k);
  }
}

/**
 * A quota's limit from the profiled <request, limit>: the same ratio (limit ÷ request) applied to
 * the quota the policy chose, capped at 1 and never below the quota. Pure.
 */
export function limitForQuota(q: number, rl: Pick<RequestLimit, 'request' | 'limit'> | undefined): number | undefined {
  if (!rl || !(rl.request > 0) || !(rl.limit > rl.request)) return undefined;
  return Math.min(1, Math.max(q, q * (rl.limit / rl.request)));
}
