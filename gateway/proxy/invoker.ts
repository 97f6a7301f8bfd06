import { randomUUID } from 'node:crypto';
import { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { pipeline } from 'node:stream';
import { ErrorCode, functionNotFound, invalid, PlatformError, toHttp } from '../errors';
import { invocationTimeoutMs } from '../registry/timeouts-spec';
import { checkDnsLabel, FunctionRef, splitQualified } from '../lib/names';
import type { GatewayMetrics } from '../metrics/gateway-metrics';
import type { SecondWindow } from '../metrics/second-window';
import type { FunctionProvider } from '../providers/function-provider';
import type { AcceptEntry, Admission } from './admission';
import { Upstream } from './balancer';
import { FunctionState } from './function-state';
import { readBody } from './read-body';
import { FunctionRouter } from './router';
import { BrokenBeforeAnswer, NotDelivered, UpstreamClient, UpstreamResponse } from './upstream-client';

export interface InvokerOptions {
  maxBodyBytes: number;
  upstreamTimeoutMs: number;
  scaleFromZeroTimeoutMs: number;
  /** The fixed-cluster mode's accept rates (admission.ts); absent: every request is admitted. */
  admission?: Admission;
}

/** Maps any error to the answer a protocol gives it (`toHttp` for `/function/`, `v2Error` for `/v2/`). */
export type ErrorFormat = (e: unknown) => { status: number; headers: Record<string, string>; body: unknown };

/** How `Invoker.proxy` treats one request beyond the `/function/` defaults. */
export interface ProxyOptions {
  /** Checks the body before the request is queued; throws a PlatformError (a 4xx) to refuse it. */
  check?: (body: Buffer, req: IncomingMessage) => void;
  /** The gateway's own errors in this protocol's form. */
  errors?: ErrorFormat;
}

/** A request to a function, independent of where it came from (HTTP or the async queue). */
export interface Invocation {
  ref: FunctionRef;
  method: string;
  /** Path after the function name plus query, e.g. `/predict?x=1` (or `/`). */
  path: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
  callId: string;
}

const HOP = new Set(['connection', 'keep-alive', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'host']);
/** Not forwarded upstream: hop-by-hop, plus content-length (undici sets it from the buffered body). */
const NOT_UPSTREAM = new Set([...HOP, 'content-length']);

/** OpenFaaS's X-Start-Time: Unix time in nanoseconds, as a decimal string. */
const startTime = (ms: number) => `${ms}000000`;

/** Tries of a request whose connection was refused, each on another replica where there is one. */
const RETRIES_NOT_DELIVERED = 3;
/** How long a replica that refused a connection is passed over (the agent notices meanwhile). */
const DOWN_FOR_MS = 2000;

function forwardHeaders(h: IncomingHttpHeaders): IncomingHttpHeaders {
  const out: IncomingHttpHeaders = {};
  for (const k in h) if (!NOT_UPSTREAM.has(k)) out[k] = h[k];
  return out;
}

/** Parses `/function/{name}[.{ns}][/path][?query]` (prefix given); undefined when malformed. */
export function parseInvocationPath(url: string, prefix: string): { ref: FunctionRef; path: string } {
  const rest = url.slice(prefix.length);
  const cut = rest.search(/[/?]/);
  let seg: string;
  try {
    seg = decodeURIComponent(cut < 0 ? rest : rest.slice(0, cut));
  } catch {
    throw invalid('name', 'malformed percent-encoding in the function name');
  }
  let path = cut < 0 ? '/' : rest.slice(cut);
  if (path.startsWith('?')) path = '/' + path;
  const ref = splitQualified(seg);
  checkDnsLabel(ref.name, 'name');
  checkDnsLabel(ref.namespace, 'namespace');
  return { ref, path };
}

/** `/function/` and `/async-function/` of a training function: a 400 naming `function`, pointing at the jobs API. */
export const trainingNotInvocable = (label: string) =>
  invalid('function', `${label} is a training function: it serves no invocations; submit training jobs with POST /system/jobs`);

/**
 * The invocation proxy: per-function queue, weighted least-outstanding balancing, scale from
 * zero, upstream timeout, OpenFaaS's X-Call-Id / X-Start-Time / X-Duration-Seconds headers.
 */
export class Invoker {
  private readonly client: UpstreamClient;
  private sweeper: NodeJS.Timeout;
  private readonly waking = new Map<string, Promise<void>>();

  constructor(
    private readonly router: FunctionRouter,
    private readonly provider: FunctionProvider,
    private readonly metrics: GatewayMetrics,
    private readonly window: SecondWindow,
    private readonly opts: InvokerOptions,
  ) {
    this.client = new UpstreamClient(opts.upstreamTimeoutMs);
    this.sweeper = setInterval(() => this.client.sweep([...this.router.all()].flatMap((s) => s.upstreams)), 30_000);
    this.sweeper.unref();
  }

  /** Handles `/function/*` on the raw HTTP server (no Express on the hot path). */
  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let target: { ref: FunctionRef; path: string };
    try {
      target = parseInvocationPath(req.url!, '/function/');
    } catch (e) {
      return this.fail(res, e, undefined, process.hrtime.bigint());
    }
    return this.proxy(req, res, target.ref, target.path);
  }

  /**
   * Proxies one request to `ref`'s replicas at `path`: queued, balanced, woken from zero,
   * admitted, metered, bounded by the function's own timeouts. `how` lets another protocol on
   * the same path (the Open Inference Protocol, v2-handler.ts) check the body before it is
   * queued and answer the gateway's own errors in its form; the replica's answers pass unchanged.
   */
  async proxy(req: IncomingMessage, res: ServerResponse, ref: FunctionRef, path: string, how: ProxyOptions = {}): Promise<void> {
    const started = Date.now();
    const startHr = process.hrtime.bigint();
    let state: FunctionState | undefined;
    const format = how.errors ?? toHttp;
    try {
      const s = await this.stateOf(ref);
      state = s;
      if (s.kind === 'training') throw trainingNotInvocable(s.label);
      const body = await readBody(req, this.opts.maxBodyBytes, s.timeouts.readMs);
      how.check?.(body, req);
      const callId = (req.headers['x-call-id'] as string) || randomUUID();
      const inv: Invocation = { ref, method: req.method!, path, headers: req.headers, body, callId };
      const drop = this.opts.admission?.check(s.label);
      if (drop) return this.dropped(res, s, drop, startHr, format);
      const { upstream, response } = await this.send(s, inv, started);
      const secs = Number(process.hrtime.bigint() - startHr) / 1e9;
      const headers: Record<string, string | string[]> = {};
      for (const k in response.headers) if (!HOP.has(k)) headers[k] = response.headers[k]!;
      headers['x-call-id'] = callId;
      headers['x-start-time'] = startTime(started);
      headers['x-duration-seconds'] = secs.toFixed(6);
      if (res.destroyed) {
        // the client left while its request waited or ran: free the slot, drop the answer
        response.body.on('error', () => undefined); // destroy() emits an abort error: expected, not a crash
        response.body.destroy();
        this.finish(s, upstream, 499, startHr);
        return;
      }
      res.writeHead(response.statusCode, headers);
      this.metrics.inference.answered(s.label, response.statusCode, response.headers);
      this.window.batchAnswer(s.ref, response.headers['x-batch-size']);
      pipeline(response.body, res, (err) => this.finish(s, upstream, err ? (res.destroyed ? 499 : 502) : response.statusCode, startHr));
    } catch (e) {
      this.fail(res, e, state, startHr, format);
    }
  }

  private stateOf(ref: FunctionRef): Promise<FunctionState> {
    const s = this.router.state(ref);
    if (s instanceof FunctionState) return Promise.resolve(s);
    return Promise.resolve(s).then((st) => {
      if (!st) throw functionNotFound(ref.name, ref.namespace);
      return st;
    });
  }

  /** Waits for a replica slot (waking the function from zero if needed) and sends the request. */
  async send(s: FunctionState, inv: Invocation, started = Date.now()): Promise<{ upstream: Upstream; response: UpstreamResponse }> {
    if (s.kind === 'training') throw trainingNotInvocable(s.label);
    this.window.arrival(s.ref);
    if (s.upstreams.length === 0 && s.desired === 0) await this.wake(s);
    // the function's exec_timeout (+ grace) where it set one, else MLFAAS_UPSTREAM_TIMEOUT_MS
    const limitMs = invocationTimeoutMs(s.timeouts, this.opts.upstreamTimeoutMs);
    const wait = s.upstreams.length === 0 ? this.opts.scaleFromZeroTimeoutMs : limitMs;
    for (let attempt = 1; ; attempt++) {
      let upstream: Upstream;
      try {
        upstream = await s.acquire(wait);
      } catch (e) {
        if (e instanceof PlatformError && e.code === ErrorCode.QueueFull) this.window.rejected(s.ref);
        throw e;
      }
      try {
        const response = await this.forward(upstream, inv, started, limitMs);
        return { upstream, response };
      } catch (e) {
        s.release(upstream);
        // never delivered (the replica died, its socket is gone): passed over for a while, and
        // the request goes to another replica, as a service mesh retries a refused connection; so
        // does an inference request whose connection broke before any answer (a replica that
        // stopped under it: a prediction run twice changes nothing; a classic function's may)
        const again = e instanceof NotDelivered || (e instanceof BrokenBeforeAnswer && s.kind === 'inference');
        if (!again || attempt >= RETRIES_NOT_DELIVERED || s.upstreams.length < 2) throw e;
        upstream.downUntil = Date.now() + DOWN_FOR_MS;
      }
    }
  }

  private wake(s: FunctionState): Promise<void> {
    const key = s.label;
    let p = this.waking.get(key);
    if (!p) {
      // only from zero: a stale view must never scale a running function down to 1
      p = (this.provider.wake ? this.provider.wake(s.ref) : this.provider.scale(s.ref, 1)).finally(() => this.waking.delete(key));
      this.waking.set(key, p);
    }
    return p;
  }

  private forward(u: Upstream, inv: Invocation, started: number, timeoutMs: number): Promise<UpstreamResponse> {
    const headers = forwardHeaders(inv.headers);
    headers['x-call-id'] = inv.callId;
    headers['x-start-time'] = startTime(started);
    return this.client.send(u, inv.method, inv.path, headers, inv.body, timeoutMs);
  }

  finish(s: FunctionState, u: Upstream, code: number, startHr: bigint): void {
    s.release(u);
    const secs = Number(process.hrtime.bigint() - startHr) / 1e9;
    this.metrics.record(s.label, code, secs);
    this.window.completion(s.ref, secs * 1000, code < 500, u.id);
  }

  /**
   * A request the fixed-cluster controller's accept rate drops: counted as an arrival (demand the
   * controller must see) and a drop, answered 429 at once with `Retry-After` and why.
   */
  private dropped(res: ServerResponse, s: FunctionState, e: AcceptEntry, startHr: bigint, format: ErrorFormat): void {
    this.window.arrival(s.ref);
    this.window.dropped(s.ref);
    this.metrics.dropped(s.label);
    this.metrics.record(s.label, 429, Number(process.hrtime.bigint() - startHr) / 1e9);
    const pct = Math.round(e.rate * 1000) / 10;
    const message = `request dropped: the cluster is full and ${s.label} admits ${pct}% of its requests now (fixed-cluster controller: ${e.reason})`;
    const h = format(new PlatformError(ErrorCode.QueueFull, message));
    const body = format === toHttp ? { error: { code: 'dropped', message } } : { ...(h.body as object), code: 'dropped' };
    res.writeHead(429, { 'content-type': 'application/json', 'retry-after': String(e.retryAfterS) });
    res.end(JSON.stringify({ ...body, acceptRate: e.rate, retryAfterS: e.retryAfterS }));
  }

  private fail(res: ServerResponse, e: unknown, s: FunctionState | undefined, startHr: bigint, format: ErrorFormat = toHttp): void {
    const h = format(e);
    if (s) {
      const secs = Number(process.hrtime.bigint() - startHr) / 1e9;
      this.metrics.record(s.label, h.status, secs);
      if (e instanceof PlatformError && (e.code === ErrorCode.UpstreamTimeout || e.code === ErrorCode.RequestTimeout)) {
        this.metrics.timedOut(s.label, e.code === ErrorCode.RequestTimeout ? 'read' : 'exec');
      }
      // the autoscaler must see gateway-side failures (timeouts, 502s, queue waits) too
      this.window.completion(s.ref, secs * 1000, false);
    }
    if (res.headersSent) {
      res.destroy();
      return;
    }
    const headers: Record<string, string> = { 'content-type': 'application/json', ...h.headers };
    if (e instanceof PlatformError && e.code === ErrorCode.RequestTimeout) {
      // the rest of a body that stopped arriving is not worth waiting for
      res.shouldKeepAlive = false;
      headers.connection = 'close';
    }
    res.writeHead(h.status, headers);
    res.end(JSON.stringify(h.body));
  }

  close(): void {
    clearInterval(this.sweeper);
    this.opts.admission?.close();
    void this.client.close();
  }
}
