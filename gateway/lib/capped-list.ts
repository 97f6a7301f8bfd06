import type Redis from 'ioredis';

/** JSON, or undefined for a stray value that is not JSON (skipped by `range`, never a 5xx). */
export function parseJsonOrSkip<T>(raw: string): T | undefined {
  try {
    return JSON.parse(raw) as T;
  } catch {
    return undefined;
  }
}

/**
 * The newest `kept` values of a Redis list, newest first (LPUSH + LTRIM in one MULTI, optionally an
 * expiry refreshed on each push): the store behind scaling events, forecasts and job refusals.
 */
export class CappedList<T> {
  constructor(
    private readonly redis: Redis,
    readonly kept: number,
    private readonly parse: (raw: string) => T | undefined = parseJsonOrSkip,
    private readonly ttlS?: number,
  ) {}

  async push(key: string, value: T): Promise<void> {
    const m = this.redis.multi().lpush(key, JSON.stringify(value)).ltrim(key, 0, this.kept - 1);
    if (this.ttlS !== undefined) m.expire(key, this.ttlS);
    await m.exec();
  }

  /** Newest first, at most `limit` (clamped to 1..kept). */
  async range(key: string, limit = this.kept): Promise<T[]> {
    const n = Math.max(1, Math.min(Math.floor(limit), this.kept));
    const raw = await this.redis.lrange(key, 0, n - 1);
    return raw.map(this.parse).filter((v): v is T => v !== undefined);
  }

  async remove(key: string): Promise<void> {
    await this.redis.del(key);
  }
}
