import type Redis from 'ioredis';
import { FunctionRef, refKey } from '../../lib/names';
import { keys } from '../../registry/keys';

/** First uid handed to functions: far above distributions' system and login users. */
export const FUNCTION_UID_BASE = 200_000;

/**
 * The unprivileged uid (= gid) a function's processes run as: one per function, allocated once
 * in Redis so it is stable across restarts and agents, and never shared by two functions (a
 * function can read neither another's files nor its /proc entries).
 */
export async function functionUid(redis: Redis, ref: FunctionRef): Promise<number> {
  const k = refKey(ref);
  const got = await redis.hget(keys.functionUids, k);
  if (got) return Number(got);
  const n = await redis.incr(keys.functionUidNext);
  await redis.hsetnx(keys.functionUids, k, String(FUNCTION_UID_BASE + n));
  return Number(await redis.hget(keys.functionUids, k)); // a racing agent's allocation wins
}
