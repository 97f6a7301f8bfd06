import type Redis from 'ioredis';

/**
 * Admission control of the fixed-cluster mode (issue 24): the autoscaler's cluster controller
 * decides an accept rate per function (the share of its requests admitted when the cluster cannot
 * carry them all, Faro's request dropping) and writes it here; every gateway reads it and answers
 * the dropped share of synchronous invocations with 429 and `Retry-After` at once, before they
 * queue. Async invocations are never dropped here (they were accepted with a 202 already).
 *
 * The table is a Redis hash (the store the autoscaler already writes and every gateway reads),
 * `name.namespace` → AcceptEntry JSON. An entry carries its own expiry: an autoscaler that stops
 * leaves no function throttled for longer than `untilMs`.
 */
export const ACCEPT_RATES_KEY = 'mlfaas:accept-rates';

export interface AcceptEntry {
  /** Fraction of requests admitted, in [0, 1). */
  rate: number;
  /** What a dropped request's `Retry-After` says, s (the controller's next decision). */
  retryAfterS: number;
  /** Why, in words: the controller's reason. */
  reason: string;
  /** Epoch ms after which the entry no longer applies (the writer renews it every tick). */
  untilMs: number;
}

/** Parses one stored entry; undefined when malformed, expired, or admitting everything. */
export function parseEntry(raw: string | undefined, nowMs: number): AcceptEntry | undefined {
  if (!raw) return undefined;
  try {
    const e = JSON.parse(raw) as AcceptEntry;
    if (!(typeof e.rate === 'number' && e.rate >= 0 && e.rate < 1) || !(e.untilMs > nowMs)) return undefined;
    return { rate: e.rate, retryAfterS: Math.max(1, Math.ceil(Number(e.retryAfterS) || 1)), reason: String(e.reason ?? ''), untilMs: e.untilMs };
  } catch {
    return undefined;
  }
}

/**
 * Writes the accept rates (the autoscaler's side): a rate < 1 is stored with its expiry, a rate of
 * 1 (or null) removes the function's entry.
 */
export async function writeAcceptRates(redis: Redis, rates: Record<string, AcceptEntry | null>): Promise<void> {
  const p = redis.pipeline();
  for (const [fn, e] of Object.entries(rates)) {
    if (e && e.rate < 1) p.hset(ACCEPT_RATES_KEY, fn, JSON.stringify(e));
    else p.hdel(ACCEPT_RATES_KEY, fn);
  }
  await p.exec();
}

/** The entries in force now, by `name.namespace` (for the autoscaler and tests). */
export async function readAcceptRates(redis: Redis, nowMs = Date.now()): Promise<Map<string, AcceptEntry>> {
  const all = await redis.hgetall(ACCEPT_RATES_KEY);
  const out = new Map<string, AcceptEntry>();
  for (const [k, v] of Object.entries(all)) {
    const e = parseEntry(v, nowMs);
    if (e) out.set(k, e);
  }
  return out;
}

/**
 * A gateway's copy of the table, refreshed every `everyMs` (the request path reads memory only),
 * and the admission decision. Deterministic: each function keeps a credit that grows by its rate
 * per request and pays 1 per admitted one, so exactly the fraction `rate` is admitted over any
 * run of requests (±1), evenly spread (no random bursts of drops).
 */
export class Admission {
  private entries = new Map<string, AcceptEntry>();
  private readonly credit = new Map<string, number>();
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly redis: Redis,
    private readonly everyMs = 500,
    private readonly now: () => number = Date.now,
  ) {}

  start(): void {
    void this.refresh();
    this.timer = setInterval(() => void this.refresh(), this.everyMs);
    this.timer.unref();
  }

  /** Reads the table; on a Redis error the last copy stays (entries still expire by their own time). */
  async refresh(): Promise<void> {
    try {
      this.entries = await readAcceptRates(this.redis, this.now());
    } catch {
      // keep the last copy
    }
    for (const k of this.credit.keys()) if (!this.entries.has(k)) this.credit.delete(k);
  }

  /** Undefined: admit. Otherwise the entry by which this request is dropped. */
  check(fn: string): AcceptEntry | undefined {
    const e = this.entries.get(fn);
    if (!e || !(e.untilMs > this.now())) return undefined;
    const c = Math.min((this.credit.get(fn) ?? 1 - e.rate) + e.rate, 1 + e.rate);
    if (c >= 1) {
      this.credit.set(fn, c - 1);
      return undefined;
    }
    this.credit.set(fn, c);
    return e;
  }

  /** The accept rate in force for `fn` now: below 1 while the controller drops a share of its requests, else 1 (`/metrics`). */
  rateOf(fn: string): number {
    const e = this.entries.get(fn);
    return e && e.untilMs > this.now() ? e.rate : 1;
  }

  close(): void {
    if (this.timer) clearInterval(this.timer);
  }
}
