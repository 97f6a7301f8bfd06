import type Redis from 'ioredis';
import { FunctionRef } from '../../lib/names';
import { keys } from '../../registry/keys';

/** Lines kept per function (approximate trim). */
const MAX_LINES = 5000;

/**
 * Replica stdout/stderr → a Redis stream per function, so `/system/logs` works from any gateway.
 * Lines are batched and written every `flushMs` with one pipeline.
 */
export class LogSink {
  private pending: Array<{ ref: FunctionRef; instance: string; ts: number; text: string }> = [];
  private timer: NodeJS.Timeout;

  constructor(
    private readonly redis: Redis,
    flushMs = 100,
  ) {
    this.timer = setInterval(() => void this.flush(), flushMs);
    this.timer.unref();
  }

  push(ref: FunctionRef, instance: string, text: string): void {
    if (this.pending.length > 10_000) return; // a replica flooding stdout must not exhaust memory
    this.pending.push({ ref, instance, ts: Date.now(), text });
  }

  async flush(): Promise<void> {
    if (this.pending.length === 0) return;
    const batch = this.pending;
    this.pending = [];
    const p = this.redis.pipeline();
    for (const l of batch) {
      p.xadd(keys.logs(l.ref), 'MAXLEN', '~', String(MAX_LINES), '*', 'ts', String(l.ts), 'i', l.instance, 't', l.text);
    }
    await p.exec().catch(() => undefined);
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }
}
