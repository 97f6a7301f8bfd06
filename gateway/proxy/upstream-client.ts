import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import { Pool } from 'undici';
import { ErrorCode, PlatformError } from '../errors';
import type { Upstream } from './balancer';

/** A replica's answer: status, headers, and the body as a stream. */
export interface UpstreamResponse {
  statusCode: number;
  headers: IncomingHttpHeaders;
  body: Readable;
}

const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT']);

/** Failures at connect: the request never reached the replica, so another one may take it. */
const NOT_DELIVERED_CODES = new Set(['ECONNREFUSED', 'ENOENT', 'EADDRNOTAVAIL']);
/** The connection broke before an answer (the replica died under it): the request may have run. */
const RESET_CODES = new Set(['UND_ERR_SOCKET', 'EPIPE', 'ECONNRESET']);
/** Methods HTTP lets a client repeat (RFC 9110 §9.2.2): a broken connection may be retried for them. */
const IDEMPOTENT = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE']);

/**
 * A request another replica may take: it never reached its replica (refused connection, socket
 * gone), or it is idempotent and its connection broke before any answer (Envoy's
 * `connect-failure` and, for idempotent methods, `reset`). Any other failure is the caller's 502.
 */
export class NotDelivered extends PlatformError {}

/**
 * A non-idempotent request whose connection broke before any answer: it may have run. The invoker
 * sends it to another replica only for inference functions (a prediction run twice changes nothing).
 */
export class BrokenBeforeAnswer extends PlatformError {}

/**
 * Keep-alive connection pools to replicas, one per replica (unix socket when it has one, else
 * TCP). undici rather than `http.request`: about 20% less gateway CPU per proxied request on
 * this machine (measured with the minimal proxy in bench/baselines), which is the gateway's
 * throughput limit on 2 cores.
 */
export class UpstreamClient {
  private pools = new Map<string, Pool>();

  constructor(private readonly timeoutMs: number) {}

  private static key(u: Upstream): string {
    return u.socketPath ?? `${u.host}:${u.port}`;
  }

  private pool(u: Upstream): Pool {
    const key = UpstreamClient.key(u);
    let p = this.pools.get(key);
    if (!p) {
      p = u.socketPath
        ? new Pool('http://localhost', { socketPath: u.socketPath, connections: 256, keepAliveTimeout: 30_000 })
        : new Pool(`http://${u.host}:${u.port}`, { connections: 256, keepAliveTimeout: 30_000 });
      this.pools.set(key, p);
    }
    return p;
  }

  /** Sends one request; `timeoutMs` (the function's own bound, issue 25) replaces the client's default. */
  async send(u: Upstream, method: string, path: string, headers: IncomingHttpHeaders, body: Buffer, timeoutMs = this.timeoutMs): Promise<UpstreamResponse> {
    try {
      const r = await this.pool(u).request({
        method: method as 'GET',
        path,
        headers: headers as Record<string, string>,
        body: body.length > 0 || (method !== 'GET' && method !== 'HEAD') ? body : null,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      });
      return { statusCode: r.statusCode, headers: r.headers as IncomingHttpHeaders, body: r.body };
    } catch (e) {
      const code = (e as { code?: string }).code ?? '';
      if (TIMEOUT_CODES.has(code)) {
        throw new PlatformError(ErrorCode.UpstreamTimeout, `function did not answer within ${timeoutMs} ms`);
      }
      const retryable = NOT_DELIVERED_CODES.has(code) || (IDEMPOTENT.has(method) && RESET_CODES.has(code));
      const Err = retryable ? NotDelivered : RESET_CODES.has(code) ? BrokenBeforeAnswer : PlatformError;
      throw new Err(ErrorCode.UpstreamUnavailable, `replica ${u.id} unreachable: ${(e as Error).message}`);
    }
  }

  /** Closes pools of replicas no longer in `live` (called when replica sets change). */
  sweep(live: Iterable<Upstream>): void {
    const keep = new Set([...live].map(UpstreamClient.key));
    for (const [k, p] of this.pools) {
      if (!keep.has(k)) {
        this.pools.delete(k);
        void p.close().catch(() => undefined); // lets requests still in flight on a draining replica finish
      }
    }
  }

  async close(): Promise<void> {
    const all = [...this.pools.values()];
    this.pools.clear();
    await Promise.all(all.map((p) => p.destroy().catch(() => undefined)));
  }
}
