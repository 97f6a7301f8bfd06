import type Redis from 'ioredis';
import { FunctionRef, refKey } from '../../lib/names';
import { FunctionSpec } from '../../registry/function-spec';
import { keys } from '../../registry/keys';

/**
 * The version of a function whose replicas last served it all (a rolling update that completed),
 * as a Deployment's old ReplicaSet outlives a restart of its controller. While an update is
 * stalled (its new version never gets ready), an agent that restarts starts this version again
 * beside the new one, so the old version keeps serving instead of the function going down.
 */
export interface ServedVersion {
  /** `specHash` of the version. */
  hash: string;
  spec: FunctionSpec;
}

/**
 * The record per function, read and written in Redis; what this agent last wrote is kept so that
 * a reconcile writes only when the serving version changes.
 */
export class ServedVersions {
  private written = new Map<string, string>();

  constructor(private readonly redis: Redis) {}

  async read(ref: FunctionRef): Promise<ServedVersion | undefined> {
    const raw = await this.redis.get(keys.servedVersion(ref));
    if (!raw) return undefined;
    try {
      return JSON.parse(raw) as ServedVersion;
    } catch {
      return undefined;
    }
  }

  /** Records `hash` once it alone serves the function (`rolloutComplete`). */
  async note(ref: FunctionRef, v: ServedVersion, now: Array<{ version: 'current' | 'old'; state: string }>): Promise<void> {
    const k = refKey(ref);
    if (this.written.get(k) === v.hash || !rolloutComplete(now)) return;
    await this.redis.set(keys.servedVersion(ref), JSON.stringify(v));
    this.written.set(k, v.hash);
  }

  /** The function is gone (`removed`) or no longer this agent's to serve (a training function). */
  async forget(ref: FunctionRef, removed: boolean): Promise<void> {
    this.written.delete(refKey(ref));
    if (removed) await this.redis.del(keys.servedVersion(ref));
  }
}

/**
 * Whether a rolling update has completed: every replica left runs the current version and one
 * of them is ready. Pure.
 */
export function rolloutComplete(replicas: Array<{ version: 'current' | 'old'; state: string }>): boolean {
  return replicas.length > 0 && replicas.every((r) => r.version === 'current') && replicas.some((r) => r.state === 'ready');
}
