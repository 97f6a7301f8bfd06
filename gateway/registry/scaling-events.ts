import type Redis from 'ioredis';
import { CappedList } from '../lib/capped-list';
import { FunctionRef, refKey } from '../lib/names';

/** One autoscaler decision as users see it (`GET /system/scaling-events`, `faas-cli describe`). */
export interface ScalingEvent {
  /** RFC3339 */
  time: string;
  /** Policy that decided, e.g. `hybrid`. */
  policy: string;
  /**
   * `replicas`, `quota`, `weight`, `sm-share` (a GPU replica's SM share: a replacement replica),
   * `accept-rate` (the share of requests the fixed-cluster mode admits; the rest get 429) or
   * `none` (a decision to hold, stored only when its reason changes).
   */
  action: 'replicas' | 'quota' | 'weight' | 'sm-share' | 'accept-rate' | 'none';
  from?: number;
  to?: number;
  /** For quota/weight/sm-share: the replica it applies to. */
  replica?: string;
  reason: string;
  /** Set when the provider call failed: what failed and why (the change did not happen). */
  error?: string;
}

const KEEP = 1000;
const listKey = (r: FunctionRef) => `mlfaas:scaling-events:${refKey(r)}`;

/** Decisions with their reasons, newest first, the last `KEEP` per function. */
export class ScalingEvents {
  // strict: events are only ever written by record(), so a value that is not JSON is a fault to see
  private readonly store: CappedList<ScalingEvent>;

  constructor(redis: Redis) {
    this.store = new CappedList(redis, KEEP, (r) => JSON.parse(r) as ScalingEvent);
  }

  async record(ref: FunctionRef, e: ScalingEvent): Promise<void> {
    await this.store.push(listKey(ref), e);
  }

  async list(ref: FunctionRef, limit = 100): Promise<ScalingEvent[]> {
    return this.store.range(listKey(ref), limit);
  }

  async remove(ref: FunctionRef): Promise<void> {
    await this.store.remove(listKey(ref));
  }

  /** One line for `faas-cli describe` (an annotation value). */
  static summary(e: ScalingEvent): string {
    const change = e.from !== undefined && e.to !== undefined ? ` ${e.from}→${e.to}` : '';
    const who = e.replica ? ` ${e.replica}` : '';
    return `${e.time} ${e.policy}: ${e.action}${who}${change}${e.error ? ` FAILED (${e.error})` : ''} — ${e.reason}`;
  }
}
