import type Redis from 'ioredis';
import { FunctionRef, refKey } from '../../lib/names';
import { replicaSettingsKey } from '../../registry/keys';
import { PlacementBook } from '../../registry/placements';
import type { Replica, ReplicaPlan } from './replica';
import { planShareReplacements } from './share-replacement';

/** What the replacer needs of the agent. */
export interface ReplacerHost {
  /** A new replica (not started) of `plan`, owned by `ref` (its logs and records reach the function). */
  newReplica(ref: FunctionRef, plan: ReplicaPlan): Replica;
  /** `next` takes `old`'s place in the function's list; the caller then stops `old`. */
  swap(ref: FunctionRef, old: Replica, next: Replica): void;
  /** Forgets a stopped replica (its ownership, its applied allotments). */
  forget(id: string): void;
  log(ref: FunctionRef, instance: string, text: string): void;
  /** A replica started cold for `cause` (metrics). */
  coldStart(ref: FunctionRef, cause: 'sm-share'): void;
}

/**
 * Carries out `planShareReplacements` for the agent: starts each replacement with its old
 * replica's settings (quota, weight) and placement, the wanted share, and a plan of its own; swaps
 * it in once ready and stops the old one (drained); stops replacements no longer wanted.
 * Replacements stay out of the function's list until they take over, so the rollout never
 * counts them.
 */
export class ShareReplacer {
  private readonly inFlight = new Map<string, { ref: FunctionRef; replica: Replica; replaces: string; smShare: number }>();
  private readonly book: PlacementBook;
  /** Replacements started, per cause (tests; the gateway's metrics count them too). */
  readonly started = { 'sm-share': 0 };

  constructor(
    private readonly redis: Redis,
    private readonly host: ReplacerHost,
  ) {
    this.book = new PlacementBook(redis);
  }

  /** Replacements under way for `ref` (their quotas are enforced like any replica's). */
  of(ref: FunctionRef): Replica[] {
    const k = refKey(ref);
    return [...this.inFlight.values()].filter((x) => refKey(x.ref) === k).map((x) => x.replica);
  }

  /** One step for a function: `list` its replicas (not stopping), `hash` its current version. */
  async step(ref: FunctionRef, list: readonly Replica[], hash: string): Promise<void> {
    const settings = await this.redis.hgetall(replicaSettingsKey(ref));
    const wanted: Record<string, number | undefined> = {};
    for (const [id, raw] of Object.entries(settings)) wanted[id] = (JSON.parse(raw) as { smShare?: number }).smShare;
    const mine = [...this.inFlight.entries()].filter(([, x]) => refKey(x.ref) === refKey(ref));
    const step = planShareReplacements(
      list.map((r) => ({ id: r.id, state: r.state, smShare: r.smShare, current: r.plan.specHash === hash })),
      wanted,
      mine.map(([id, x]) => ({ id, replaces: x.replaces, state: x.replica.state, smShare: x.smShare })),
    );
    for (const id of step.cancel) {
      const x = this.inFlight.get(id)!;
      this.inFlight.delete(id);
      await x.replica.stop({ drain: false });
      this.host.forget(id);
    }
    for (const s of step.start) {
      const old = list.find((r) => r.id === s.replaces)!;
      const next = this.host.newReplica(ref, { ...old.plan, smShare: s.smShare });
      const setting = JSON.parse(settings[old.id] ?? '{}') as { quota?: number; weight?: number };
      await this.redis.hset(replicaSettingsKey(ref), next.id, JSON.stringify({ ...setting, smShare: s.smShare }));
      const placed = (await this.book.read(ref))[old.id];
      if (placed) await this.book.write(ref, next.id, { ...placed, smShare: s.smShare });
      this.inFlight.set(next.id, { ref, replica: next, replaces: old.id, smShare: s.smShare });
      this.host.coldStart(ref, 'sm-share');
      this.started['sm-share']++;
      this.host.log(ref, old.id,
        `SM share ${old.smShare} → ${s.smShare}: starting ${next.id} at ${s.smShare} (fixed at a replica's start); this one retires once it is ready`);
      void next.start().catch((e: Error) => this.host.log(ref, next.id, `start failed: ${e.message}`));
    }
    for (const s of step.swap) {
      const x = this.inFlight.get(s.replacement)!;
      const old = list.find((r) => r.id === s.retire)!;
      this.inFlight.delete(s.replacement);
      this.host.swap(ref, old, x.replica);
      await old.stop();
      this.host.forget(old.id);
    }
  }

  /** Stops every replacement (the agent lost its lease or closes). */
  async stopAll(): Promise<void> {
    const all = [...this.inFlight.values()];
    this.inFlight.clear();
    await Promise.all(all.map((x) => x.replica.stop({ drain: false })));
  }
}
