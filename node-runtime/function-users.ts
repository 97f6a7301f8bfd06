import type Redis from 'ioredis';
import { FunctionRef, refKey } from '../gateway/lib/names';
import { keys } from '../gateway/registry/keys';

/** First uid handed to functions: far above distributions' system and login users. */
export const FUNCTION_UID_BASE = 200_000;

/**
 * The one uid (= gid) every sandboxed GPU replica of a node runs as where the node runs the MPS
 * control daemon (which runs as it too): an MPS server serves the clients of one uid at a time,
 * and a client of another uid waits until the running server's clients have all exited, so
 * per-function uids would serialise GPU functions. Below the functions' range, never allocated to
 * one. What separates GPU replicas that share it (pid, mount, IPC and network namespaces; only
 * their own secrets and image bound in) is in docs/gpu-sharing.md.
 */
export const GPU_UID = FUNCTION_UID_BASE - 1;

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
