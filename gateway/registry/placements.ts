import type Redis from 'ioredis';
import type { FunctionRef } from '../lib/names';
import { refKey } from '../lib/names';

/** Where the autoscaler put a replica: its device, SM share, and the batch it plans for. */
export interface ReplicaPlacement {
  gpu: string;
  smShare: number;
  batchSize: number;
}

const key = (r: FunctionRef) => `mlfaas:autoscaler:placements:${refKey(r)}`;

/** The autoscaler's placement book in Redis (it writes, the node's agent reads), so a restarted or new leader keeps it. */
export class PlacementBook {
  constructor(private readonly redis: Redis) {}

  async read(ref: FunctionRef): Promise<Record<string, ReplicaPlacement>> {
    const all = await this.redis.hgetall(key(ref));
    return Object.fromEntries(Object.entries(all).map(([id, v]) => [id, JSON.parse(v) as ReplicaPlacement]));
  }

  async write(ref: FunctionRef, id: string, s: ReplicaPlacement): Promise<void> {
    await this.redis.hset(key(ref), id, JSON.stringify(s));
  }

  /** Drops placements of replicas that no longer exist. */
  async prune(ref: FunctionRef, live: ReadonlySet<string>): Promise<void> {
    const ids = await this.redis.hkeys(key(ref));
    const gone = ids.filter((id) => !live.has(id));
    if (gone.length) await this.redis.hdel(key(ref), ...gone);
  }
}
