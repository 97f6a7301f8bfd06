import { PlatformError, ErrorCode } from '../errors';
import { FunctionRef } from '../lib/names';
import { ReplicaInfo } from '../registry/registry';
import { pickUpstream, Upstream } from './balancer';

interface Waiter {
  resolve(u: Upstream): void;
  reject(e: Error): void;
  timer?: NodeJS.Timeout;
}

/**
 * One function as this gateway routes it: its ready upstreams with in-flight counts, and a
 * bounded FIFO of requests waiting for a free replica slot (tail drop when full).
 */
export class FunctionState {
  upstreams: Upstream[] = [];
  desired = 0;
  private queue: Waiter[] = [];
  inflight = 0;
  /** `inference`, `classic` or `training` (from the image). */
  kind = 'inference';
  /** Prometheus `function_name` label: `name.namespace`. */
  readonly label: string;

  /**
   * @param maxInflight concurrent requests one replica is sent before requests queue
   * @param queueDepth requests that may wait before tail drop
   */
  constructor(
    readonly ref: FunctionRef,
    public maxInflight: number,
    private readonly queueDepth: number,
  ) {
    this.label = `${ref.name}.${ref.namespace}`;
  }

  get queued(): number {
    return this.queue.length;
  }

  /**
   * Replaces the replica set. Replicas that stay keep their Upstream object (requests in flight
   * hold it and release into it), updated in place.
   */
  setReplicas(replicas: ReplicaInfo[], desired: number): void {
    this.desired = desired;
    const old = new Map(this.upstreams.map((u) => [u.id, u]));
    this.upstreams = replicas
      .filter((r) => r.state === 'ready')
      .map((r) => {
        const url = new URL(r.url);
        const u = old.get(r.id) ?? { id: r.id, host: '', port: 0, weight: 1, outstanding: 0 };
        u.host = url.hostname;
        u.port = Number(url.port);
        u.weight = r.weight > 0 ? r.weight : 1;
        u.socketPath = r.socket;
        return u;
      });
    this.drain();
  }

  /** A replica slot now, or a place in the queue; 429 with Retry-After when the queue is full. */
  acquire(waitMs: number): Promise<Upstream> {
    const limit = this.maxInflight;
    if (this.queue.length === 0) {
      const u = pickUpstream(this.upstreams, limit);
      if (u) {
        u.outstanding++;
        this.inflight++;
        return Promise.resolve(u);
      }
    }
    if (this.queue.length >= this.queueDepth) {
      return Promise.reject(
        new PlatformError(ErrorCode.QueueFull, `queue for ${this.ref.name}.${this.ref.namespace} is full (${this.queueDepth} waiting)`, undefined, {
          'Retry-After': '1',
        }),
      );
    }
    return new Promise<Upstream>((resolve, reject) => {
      const w: Waiter = { resolve, reject };
      w.timer = setTimeout(() => {
        const i = this.queue.indexOf(w);
        if (i >= 0) this.queue.splice(i, 1);
        reject(
          new PlatformError(
            this.upstreams.length === 0 ? ErrorCode.NoReplicas : ErrorCode.UpstreamTimeout,
            this.upstreams.length === 0
              ? `no ready replica of ${this.ref.name}.${this.ref.namespace} within ${waitMs} ms`
              : `request waited ${waitMs} ms in the queue of ${this.ref.name}.${this.ref.namespace}`,
          ),
        );
      }, waitMs);
      this.queue.push(w);
    });
  }

  release(u: Upstream): void {
    u.outstanding--;
    this.inflight--;
    this.drain();
  }

  private drain(): void {
    const limit = this.maxInflight;
    while (this.queue.length > 0) {
      const u = pickUpstream(this.upstreams, limit);
      if (!u) return;
      const w = this.queue.shift()!;
      if (w.timer) clearTimeout(w.timer);
      u.outstanding++;
      this.inflight++;
      w.resolve(u);
    }
  }

  /** Fails every waiter (function removed). */
  rejectAll(e: Error): void {
    for (const w of this.queue.splice(0)) {
      if (w.timer) clearTimeout(w.timer);
      w.reject(e);
    }
  }
}
