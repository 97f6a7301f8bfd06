import type Redis from 'ioredis';
import { FunctionRef } from '../../lib/names';
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

export async function readServedVersion(redis: Redis, ref: FunctionRef): Promise<ServedVersion | undefined> {
  const raw = await redis.get(keys.servedVersion(ref));
  if (!raw) return undefined;
  try {
    return JSON.parse(raw) as ServedVersion;
  } catch {
    return undefined;
  }
}

export async function writeServedVersion(redis: Redis, ref: FunctionRef, v: ServedVersion): Promise<void> {
  await redis.set(keys.servedVersion(ref), JSON.stringify(v));
}

export async function forgetServedVersion(redis: Redis, ref: FunctionRef): Promise<void> {
  await redis.del(keys.servedVersion(ref));
}

/**
 * Whether a rolling update has completed: every replica left runs the current version and one
 * of them is ready. Pure.
 */
export function rolloutComplete(replicas: Array<{ version: 'current' | 'old'; state: string }>): boolean {
  return replicas.length > 0 && replicas.every((r) => r.version === 'current') && replicas.some((r) => r.state === 'ready');
}
