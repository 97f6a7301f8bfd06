import { PlatformError, ErrorCode } from '../errors';
import { FunctionRef } from '../lib/names';
import { ReplicaInfo } from '../registry/registry';
import type { FunctionTimeouts } from '../registry/timeouts-spec';
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
  /** The function's own `read_timeout` / `write_timeout` / `exec_timeout` (env, issue 25); empty: the gateway's defaults. */
  timeouts: FunctionTimeouts = {};
  /** The model version its replicas serve (v2 `versions`): `mlfaas.model.sha256`'s first 12 hex, else '1'. */
  modelVersion = '1';
  /** `inference`, `classic` or `training` (from the image). */
  kind = 'inference';
  /** Prometheus `function_name` label: `name.namespace`. */
  readonly label: string;
  /**
   * Set while every replica is crashed or restarting after a crash (none ready): the last
   * error one of them reported. Requests then get a 503 with it at once instead of waiting.
   */
  crashError?: string;

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
    this.crashError = crashLoopError(replicas);
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
    if (this.crashError && this.upstreams.length === 0) this.rejectAll(this.crashLooping());
  }

  private crashLooping(): PlatformError {
    return new PlatformError(
      ErrorCode.NoReplicas,
      `${this.ref.name}.${this.ref.namespace} is crash-looping (no replica stays up); last error: ${this.crashError}`,
      undefined,
      { 'Retry-After': '5' },
    );
  }

  /** A replica slot now, or a place in the queue; 429 with Retry-After when the queue is full. */
  acquire(waitMs: number): Promise<Upstream> {
    const limit = this.maxInflight;
    if (this.crashError && this.upstreams.length === 0) return Promise.reject(this.crashLooping());
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

/** The last error of a function whose every replica crashed since it was last ready (pure). */
export function crashLoopError(replicas: readonly ReplicaInfo[]): string | undefined {
  const live = replicas.filter((r) => r.state !== 'draining');
  const looping = live.length > 0 && live.every((r) => r.state === 'crashed' || (r.state === 'starting' && r.lastError !== undefined));
  return looping ? live.map((r) => r.lastError).find((e) => e !== undefined) : undefined;
}
