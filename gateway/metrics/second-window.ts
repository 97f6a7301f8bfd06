import type Redis from 'ioredis';
import { FunctionRef, refKey } from '../lib/names';
import { keys } from '../registry/keys';
import { LATENCY_BUCKETS_MS } from './latency-buckets';

/** Upper bounds (ms) of the latency histogram kept per function per second: the ones the autoscaler reads. */
export { LATENCY_BUCKETS_MS };

/** Per-function counters for one second, as stored in the Redis hash `mlfaas:metrics:<fn>:<sec>`. */
export interface SecondCounters {
  arrivals: number;
  completions: number;
  errors: number;
  rejected: number;
  /** Requests the fixed-cluster controller's accept rate dropped (429, never queued). */
  dropped: number;
  latencySumMs: number;
  /** counts per LATENCY_BUCKETS_MS bucket */
  buckets: number[];
  /** Requests waiting in gateways' queues, summed over gateways (sampled at flush). */
  queue: number;
  /** Requests in flight to replicas, summed over gateways (sampled at flush). */
  inflight: number;
  /** Completions per replica id. */
  perReplica: Record<string, number>;
  /** Answers that carried `X-Batch-Size` (Triton's nv_inference_count); absent: none. */
  batched?: number;
  /** Σ 1/X-Batch-Size over them: batch executions (nv_inference_exec_count); batched/batchExecs is the mean batch size. */
  batchExecs?: number;
}

/** Gauges a gateway adds to each second's hash when it flushes. */
export type GaugeSource = () => Iterable<{ ref: FunctionRef; queue: number; inflight: number }>;

const empty = (): SecondCounters => ({
  arrivals: 0,
  completions: 0,
  errors: 0,
  rejected: 0,
  dropped: 0,
  latencySumMs: 0,
  buckets: LATENCY_BUCKETS_MS.map(() => 0),
  queue: 0,
  inflight: 0,
  perReplica: {},
});

export function bucketOf(ms: number): number {
  let i = 0;
  while (ms > LATENCY_BUCKETS_MS[i]) i++;
  return i;
}

/**
 * Aggregates arrivals, completions and latencies in memory and adds them to per-second hashes in
 * Redis once a second (one pipeline), where the autoscaler reads them. Several gateways add into
 * the same hashes. Keys expire after `ttlSec`.
 */
export class SecondWindow {
  private cur = new Map<string, SecondCounters>();
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly redis: Redis,
    private readonly gauges: GaugeSource = () => [],
    private readonly ttlSec = 600,
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.flush(), 1000);
    this.timer.unref();
  }

  private get(key: string): SecondCounters {
    let c = this.cur.get(key);
    if (!c) this.cur.set(key, (c = empty()));
    return c;
  }

  arrival(ref: FunctionRef): void {
    this.get(refKey(ref)).arrivals++;
  }

  rejected(ref: FunctionRef): void {
    this.get(refKey(ref)).rejected++;
  }

  dropped(ref: FunctionRef): void {
    this.get(refKey(ref)).dropped++;
  }

  /** An answer's `X-Batch-Size` (the batch it ran in); ignored unless a number ≥ 1. */
  batchAnswer(ref: FunctionRef, header: unknown): void {
    const b = Number(Array.isArray(header) ? header[0] : header);
    if (header === undefined || !(b >= 1) || !Number.isFinite(b)) return;
    const c = this.get(refKey(ref));
    c.batched = (c.batched ?? 0) + 1;
    c.batchExecs = (c.batchExecs ?? 0) + 1 / b;
  }

  completion(ref: FunctionRef, ms: number, ok: boolean, replicaId?: string): void {
    const c = this.get(refKey(ref));
    c.completions++;
    if (replicaId) c.perReplica[replicaId] = (c.perReplica[replicaId] ?? 0) + 1;
    if (!ok) c.errors++;
    c.latencySumMs += ms;
    c.buckets[bucketOf(ms)]++;
  }

  async flush(nowMs = Date.now()): Promise<void> {
    for (const g of this.gauges()) {
      if (g.queue === 0 && g.inflight === 0) continue;
      const c = this.get(refKey(g.ref));
      c.queue += g.queue;
      c.inflight += g.inflight;
    }
    if (this.cur.size === 0) return;
    const batch = this.cur;
    this.cur = new Map();
    const sec = Math.floor(nowMs / 1000);
    const p = this.redis.pipeline();
    for (const [k, c] of batch) {
      const i = k.indexOf('/');
      const key = keys.metrics({ namespace: k.slice(0, i), name: k.slice(i + 1) }, sec);
      p.hincrby(key, 'arrivals', c.arrivals);
      p.hincrby(key, 'completions', c.completions);
      p.hincrby(key, 'errors', c.errors);
      p.hincrby(key, 'rejected', c.rejected);
      if (c.dropped) p.hincrby(key, 'dropped', c.dropped);
      p.hincrbyfloat(key, 'latency_sum_ms', c.latencySumMs);
      c.buckets.forEach((n, b) => n && p.hincrby(key, `le_${b}`, n));
      if (c.queue) p.hincrby(key, 'queue', c.queue);
      if (c.inflight) p.hincrby(key, 'inflight', c.inflight);
      for (const [id, n] of Object.entries(c.perReplica)) p.hincrby(key, `r:${id}`, n);
      if (c.batched) p.hincrby(key, 'batched', c.batched).hincrbyfloat(key, 'batch_execs', c.batchExecs ?? 0);
      p.expire(key, this.ttlSec);
      if (c.completions) p.hincrby(keys.invocations, k, c.completions);
    }
    await p.exec().catch(() => undefined);
  }

  close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    return this.flush();
  }
}

/** Reads one function's counters for the seconds [fromSec, toSec] (for the autoscaler and tests). */
export async function readSeconds(redis: Redis, ref: FunctionRef, fromSec: number, toSec: number): Promise<Map<number, SecondCounters>> {
  const p = redis.pipeline();
  for (let s = fromSec; s <= toSec; s++) p.hgetall(keys.metrics(ref, s));
  const res = (await p.exec()) ?? [];
  const out = new Map<number, SecondCounters>();
  res.forEach(([, h], i) => {
    const m = h as Record<string, string>;
    if (!m || Object.keys(m).length === 0) return;
    const c = empty();
    c.arrivals = Number(m.arrivals ?? 0);
    c.completions = Number(m.completions ?? 0);
    c.errors = Number(m.errors ?? 0);
    c.rejected = Number(m.rejected ?? 0);
    c.dropped = Number(m.dropped ?? 0);
    c.latencySumMs = Number(m.latency_sum_ms ?? 0);
    c.buckets = LATENCY_BUCKETS_MS.map((_, b) => Number(m[`le_${b}`] ?? 0));
    c.queue = Number(m.queue ?? 0);
    c.inflight = Number(m.inflight ?? 0);
    for (const [k, v] of Object.entries(m)) if (k.startsWith('r:')) c.perReplica[k.slice(2)] = Number(v);
    if (m.batched) [c.batched, c.batchExecs] = [Number(m.batched), Number(m.batch_execs ?? 0)];
    out.set(fromSec + i, c);
  });
  return out;
}
