import { randomBytes } from 'node:crypto';
import type Redis from 'ioredis';

const RENEW = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end return 0";
const RELEASE = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0";

/**
 * A leader lease in Redis: one holder at a time among processes sharing the key; a holder that
 * dies is replaced after `leaseMs`. `onAcquire`/`onLose` run when leadership changes.
 */
export class Lease {
  readonly token = randomBytes(6).toString('hex');
  private held = false;
  private timer?: NodeJS.Timeout;
  private closed = false;

  constructor(
    private readonly redis: Redis,
    private readonly key: string,
    private readonly leaseMs: number,
    private readonly onAcquire: () => Promise<void>,
    private readonly onLose: () => Promise<void>,
  ) {}

  get isHeld(): boolean {
    return this.held;
  }

  async start(): Promise<void> {
    await this.attempt();
    this.timer = setInterval(() => void this.attempt(), Math.max(200, this.leaseMs / 3));
  }

  private async attempt(): Promise<void> {
    if (this.closed) return;
    if (this.held) {
      const ok = await this.redis.eval(RENEW, 1, this.key, this.token, String(this.leaseMs)).catch(() => 0);
      if (ok !== 1) {
        this.held = false;
        await this.onLose();
      }
      return;
    }
    const got = await this.redis.set(this.key, this.token, 'PX', this.leaseMs, 'NX').catch(() => null);
    if (got !== 'OK') return;
    this.held = true;
    await this.onAcquire();
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    if (this.held) await this.redis.eval(RELEASE, 1, this.key, this.token).catch(() => undefined);
    this.held = false;
  }
}
