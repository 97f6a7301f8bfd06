import type Redis from 'ioredis';
import { patientDuplicate } from '../lib/redis-health';
import { keys } from './keys';

/** What changed: a function's spec or desired count (`function`), or its replica set (`replicas`). */
export interface Change {
  kind: 'function' | 'replicas';
  /** `namespace/name` */
  key: string;
}

export type ChangeListener = (c: Change) => void;

/**
 * Redis pub/sub of registry changes, so every gateway and the agent react at once instead of
 * polling. Subscribers use their own connection (a subscribed ioredis client can do nothing else).
 */
export class ChangeFeed {
  private listeners = new Set<ChangeListener>();
  private sub?: Redis;

  constructor(private readonly pub: Redis) {}

  async publish(c: Change): Promise<void> {
    await this.pub.publish(keys.changes, JSON.stringify(c));
  }

  /** Starts listening on a duplicate connection; returns an unsubscribe function. */
  async subscribe(l: ChangeListener): Promise<() => void> {
    if (!this.sub) {
      // waits out a Redis outage and resubscribes after it (the publisher may fail fast)
      this.sub = patientDuplicate(this.pub);
      this.sub.on('message', (_ch: string, msg: string) => {
        let c: Change;
        try {
          c = JSON.parse(msg) as Change;
        } catch {
          return;
        }
        for (const fn of this.listeners) fn(c);
      });
      await this.sub.subscribe(keys.changes);
    }
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  }

  async close(): Promise<void> {
    this.listeners.clear();
    if (this.sub) this.sub.disconnect();
    this.sub = undefined;
  }
}
