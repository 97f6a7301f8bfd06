import type Redis from 'ioredis';
import { FunctionRef } from '../../lib/names';
import { followStream } from '../../lib/follow-stream';
import { keys } from '../../registry/keys';
import { LogLine, LogQuery } from '../function-provider';

type Entry = [id: string, fields: string[]];

function toLine(ref: FunctionRef, [, f]: Entry): LogLine {
  const m: Record<string, string> = {};
  for (let i = 0; i < f.length; i += 2) m[f[i]] = f[i + 1];
  return {
    name: ref.name,
    namespace: ref.namespace,
    instance: m.i ?? '',
    timestamp: new Date(Number(m.ts)).toISOString(),
    text: m.t ?? '',
  };
}

/** Lines from the function's log stream: the kept tail (after `since`), then new ones while following. */
export async function* readLogs(redis: Redis, ref: FunctionRef, q: LogQuery): AsyncGenerator<LogLine> {
  const key = keys.logs(ref);
  const start = q.since ? `${q.since.getTime()}-0` : '-';
  let entries = (await redis.xrange(key, start, '+')) as Entry[];
  if (q.tail !== undefined && q.tail >= 0) entries = q.tail === 0 ? [] : entries.slice(-q.tail);
  for (const e of entries) yield toLine(ref, e);
  if (!q.follow) return;
  const last = entries.length ? entries[entries.length - 1][0] : (((await redis.xrevrange(key, '+', '-', 'COUNT', 1)) as Entry[])[0]?.[0] ?? '0-0');
  for await (const batch of followStream(redis, key, last, q.signal)) {
    for (const e of batch) yield toLine(ref, e);
  }
}
