import type Redis from 'ioredis';
import { patientDuplicate } from './redis-health';

export type StreamEntry = [id: string, fields: string[]];

/** A stream id as XREAD accepts it (`0`, `$`, `ms-seq`). */
export const STREAM_ID = /^(0|\$|\d+-\d+)$/;

/**
 * Follows a Redis stream after `fromId` on a dedicated connection until `signal` aborts.
 * Yields batches (an empty batch after each idle `blockMs`, so callers can check other exit
 * conditions). Redis errors back off instead of spinning; the abort listener is attached before
 * the first await, so a client that leaves early never strands the connection.
 */
export async function* followStream(redis: Redis, key: string, fromId: string, signal: AbortSignal, blockMs = 1000): AsyncGenerator<StreamEntry[]> {
  const conn = patientDuplicate(redis); // a blocking read outlives the request path's command timeout
  const abort = () => conn.disconnect();
  signal.addEventListener('abort', abort);
  let last = fromId;
  try {
    while (!signal.aborted) {
      let res: [string, StreamEntry[]][] | null;
      try {
        res = (await conn.xread('BLOCK', blockMs, 'STREAMS', key, last)) as [string, StreamEntry[]][] | null;
      } catch {
        if (signal.aborted) return;
        await new Promise((r) => setTimeout(r, 250));
        continue;
      }
      const entries = res ? res[0][1] : [];
      if (entries.length) last = entries[entries.length - 1][0];
      yield entries;
    }
  } finally {
    signal.removeEventListener('abort', abort);
    conn.disconnect();
  }
}
