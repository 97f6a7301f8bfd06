import { randomBytes } from 'node:crypto';
import type Redis from 'ioredis';

// renew if ours; re-claim if the key expired while Redis was away; 0 if someone else holds it
const RENEW =
  "local v = redis.call('GET', KEYS[1]) if v == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) elseif not v then " +
  "redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) return 1 end return 0";
const RELEASE = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0";

/**
 * A leader lease in Redis: one holder at a time among processes sharing the key; a holder that
 * dies is replaced after `leaseMs`. A renew that fails (Redis away, stalled loop) is retried; the
 * holder steps down by itself once `leaseMs` has passed since its last successful renew, so two
 * holders never overlap. `onAcquire`/`onLose` errors are reported to `onError`, never thrown.
 */
export class Lease {
  readonly token = randomBytes(6).toString('hex');
  private held = false;
  private renewedAt = 0;
  private timer?: NodeJS.Timeout;
  private closed = false;
  private busy = false;

  constructor(
    private readonly redis: Redis,
    private readonly key: string,
    private readonly leaseMs: number,
    private readonly onAcquire: () => Promise<void>,
    private readonly onLose: () => Promise<void>,
    private readonly onError: (e: Error) => void = () => undefined,
  ) {}

  get isHeld(): boolean {
    return this.held && Date.now() - this.renewedAt < this.leaseMs;
  }

  async start(): Promise<void> {
    await this.attempt();
    this.timer = setInterval(() => void this.attempt(), Math.max(200, this.leaseMs / 3));
  }

  private async attempt(): Promise<void> {
    if (this.closed || this.busy) return;
    this.busy = true;
    try {
      if (this.held) {
        const ok = await this.redis.eval(RENEW, 1, this.key, this.token, String(this.leaseMs)).catch(() => null);
        if (ok === 1) this.renewedAt = Date.now();
        else if (ok === 0 || Date.now() - this.renewedAt >= this.leaseMs) await this.lose();
        return;
      }
      const got = await this.redis.set(this.key, this.token, 'PX', this.leaseMs, 'NX').catch(() => null);
      if (got !== 'OK') return;
      this.held = true;
      this.renewedAt = Date.now();
      await this.onAcquire().catch((e: Error) => this.onError(e));
    } catch (e) {
      this.onError(e as Error);
    } finally {
      this.busy = false;
    }
  }

  private async lose(): Promise<void> {
    this.held = false;
    await this.onLose().catch((e: Error) => this.onError(e));
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    if (this.held) await this.redis.eval(RELEASE, 1, this.key, this.token).catch(() => undefined);
    this.held = false;
  }
}
