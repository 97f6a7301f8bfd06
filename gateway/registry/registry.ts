import type Redis from 'ioredis';
import { FunctionRef, parseRefKey, refKey } from '../lib/names';
import { ChangeFeed } from './change-feed';
import { FunctionSpec } from './function-spec';
import { HSET_IF_EXISTS, keys } from './keys';

/** What the registry stores per function: the validated spec, when it was created, what kind it is. */
export interface FunctionRecord {
  spec: FunctionSpec;
  /** RFC3339 */
  createdAt: string;
  /** From the image: `inference` and `classic` run replicas; `training` runs only for jobs. */
  kind: 'inference' | 'training' | 'classic';
}

export type ReplicaState = 'starting' | 'ready' | 'draining' | 'crashed';

/** One running copy of a function, as every gateway sees it. */
export interface ReplicaInfo {
  id: string;
  /** Base URL, e.g. http://127.0.0.1:41234 */
  url: string;
  /** Unix socket the replica also serves on (same node only; preferred by the gateway). */
  socket?: string;
  state: ReplicaState;
  /** Agent that runs it (its lock token). */
  agent: string;
  pid?: number;
  /** RFC3339 */
  startedAt: string;
  restarts: number;
  /** Load-balancer weight (autoscaler-set; default 1). */
  weight: number;
  /** Time quota in (0, 1] of the device (vertical scaling; default 1). */
  quota: number;
  /**
   * CPU replicas: the cores `quota` is a fraction of, each (locally its cpuset's cores, every core of
   * the node while unplaced; on Kubernetes the pod's declared CPU). Absent: 1.
   */
  cores?: number;
  /** GPU replicas under MPS: the SM share in (0, 1] it was started at (absent: none enforced). */
  smShare?: number;
  /** GPU replicas: the node's GPU it was given (tokend's device, `gpuN`); absent: a CPU replica. */
  gpu?: string;
  /** Why it last exited or failed to start (status and last error line); cleared once it is ready. */
  lastError?: string;
}

/** The function registry and replica table in Redis. Every write publishes a change. */
export class Registry {
  constructor(
    readonly redis: Redis,
    readonly feed: ChangeFeed,
  ) {}

  async get(ref: FunctionRef): Promise<FunctionRecord | undefined> {
    const raw = await this.redis.hget(keys.functions, refKey(ref));
    return raw ? (JSON.parse(raw) as FunctionRecord) : undefined;
  }

  async list(namespace?: string): Promise<FunctionRecord[]> {
    const all = await this.redis.hgetall(keys.functions);
    const out: FunctionRecord[] = [];
    for (const [k, v] of Object.entries(all)) {
      if (namespace !== undefined && parseRefKey(k).namespace !== namespace) continue;
      out.push(JSON.parse(v) as FunctionRecord);
    }
    return out.sort((a, b) => a.spec.service.localeCompare(b.spec.service));
  }

  /** Creates or replaces; `onlyIf` makes it a compare: `absent` → fails if present, `present` → fails if absent. */
  async put(rec: FunctionRecord, onlyIf: 'absent' | 'present'): Promise<boolean> {
    const k = refKey({ name: rec.spec.service, namespace: rec.spec.namespace });
    const json = JSON.stringify(rec);
    const ok =
      onlyIf === 'absent'
        ? (await this.redis.hsetnx(keys.functions, k, json)) === 1
        : (await this.redis.eval(
            HSET_IF_EXISTS,
            1,
            keys.functions,
            k,
            json,
          )) === 1;
    if (ok) await this.feed.publish({ kind: 'function', key: k });
    return ok;
  }

  async remove(ref: FunctionRef): Promise<boolean> {
    const k = refKey(ref);
    const [[, n]] = (await this.redis.multi().hdel(keys.functions, k).hdel(keys.desired, k).exec()) as [
      [Error | null, number],
    ];
    await this.feed.publish({ kind: 'function', key: k });
    return n === 1;
  }

  async desired(ref: FunctionRef): Promise<number> {
    return Number((await this.redis.hget(keys.desired, refKey(ref))) ?? 0);
  }

  async setDesired(ref: FunctionRef, n: number): Promise<void> {
    await this.redis.hset(keys.desired, refKey(ref), String(n));
    await this.feed.publish({ kind: 'function', key: refKey(ref) });
  }

  /** Sets the desired count only if it is 0 (or unset); true if it changed. */
  async setDesiredIfZero(ref: FunctionRef, n: number): Promise<boolean> {
    const k = refKey(ref);
    const changed = (await this.redis.eval(
      "local v = redis.call('HGET', KEYS[1], ARGV[1]) if (not v) or tonumber(v) == 0 then redis.call('HSET', KEYS[1], ARGV[1], ARGV[2]) return 1 end return 0",
      1,
      keys.desired,
      k,
      String(n),
    )) === 1;
    if (changed) await this.feed.publish({ kind: 'function', key: k });
    return changed;
  }

  async replicas(ref: FunctionRef): Promise<ReplicaInfo[]> {
    const all = await this.redis.hgetall(keys.replicas(ref));
    return Object.values(all)
      .map((v) => JSON.parse(v) as ReplicaInfo)
      .sort((a, b) => a.id.localeCompare(b.id));
  }

  async putReplica(ref: FunctionRef, r: ReplicaInfo): Promise<void> {
    await this.redis.hset(keys.replicas(ref), r.id, JSON.stringify(r));
    await this.feed.publish({ kind: 'replicas', key: refKey(ref) });
  }

  async removeReplica(ref: FunctionRef, id: string): Promise<void> {
    await this.redis.hdel(keys.replicas(ref), id);
    await this.feed.publish({ kind: 'replicas', key: refKey(ref) });
  }

  /** Drops replica records left by agents other than `agent` (they died; their processes exit with them). */
  async dropForeignReplicas(agent: string): Promise<void> {
    const fns = await this.redis.hkeys(keys.functions);
    for (const k of fns) {
      const ref = parseRefKey(k);
      for (const r of await this.replicas(ref)) {
        if (r.agent !== agent) await this.removeReplica(ref, r.id);
      }
    }
  }

  async invocationCounts(): Promise<Record<string, number>> {
    const all = await this.redis.hgetall(keys.invocations);
    const out: Record<string, number> = {};
    for (const [k, v] of Object.entries(all)) out[k] = Number(v);
    return out;
  }
}
