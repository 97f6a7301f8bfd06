/**
 * The Open Inference Protocol (KServe v2 REST) on the gateway, beside `/function/` (issue 25).
 *
 * - `GET /v2/health/live`: 200 while the process runs.
 * - `GET /v2/health/ready`: 200 while the gateway can serve (its store, Redis, answers), else 503.
 * - `GET /v2`: the server's metadata (answered here).
 * - `GET /v2/models/{name}[/versions/{v}]/ready`: answered here from the routing table, without
 *   waking anything: 200 `{name, ready: true}` when the function has a ready replica, or is scaled
 *   to zero and not crash-looping (the gateway wakes it on the first request, as a Knative-backed
 *   KServe service scaled to zero stays Ready); else 400 `{"error"}`, as Triton answers a model
 *   that is not ready (KServe's Python server answers 503; clients read any non-200 as "not ready").
 * - `GET /v2/models/{name}[/versions/{v}]` and `POST .../infer`: the SAME path as `/function/{name}`
 *   (Invoker.proxy: queued, balanced, woken from zero, admitted, metered, the function's timeouts),
 *   forwarded to a replica at the same `/v2/...` path. An infer body is checked first
 *   (v2-request.ts): a malformed one is a 400 naming its field and never queued.
 *
 * The gateway's own errors are in the protocol's form `{"error": "...", "code", "field"?}`
 * (v2Error); the replica's answers, errors included, pass unchanged.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type Redis from 'ioredis';
import { ErrorCode, PlatformError } from '../errors';
import { checkRedis } from '../lib/redis-health';
import { FunctionState } from './function-state';
import type { Invoker } from './invoker';
import type { FunctionRouter } from './router';
import { functionNotFound } from '../errors';
import { checkInferRequest } from './v2-request';
import { parseV2Path, V2_METHODS, v2Error, V2Route } from './v2-paths';

/** A route naming a model. */
type ModelRoute = Extract<V2Route, { ref: unknown }>;

export interface V2Options {
  /** The gateway's release, for `GET /v2`. */
  version: string;
}

/** Extensions of the protocol the gateway passes through and checks (the runtime serves them). */
export const V2_EXTENSIONS = ['binary_tensor_data'];

const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)), ...headers });
  res.end(text);
};

export class V2Handler {
  constructor(
    private readonly invoker: Invoker,
    private readonly router: FunctionRouter,
    private readonly redis: Redis,
    private readonly opts: V2Options,
  ) {}

  /** Handles any `/v2` URL on the raw HTTP server. */
  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let route: V2Route;
    try {
      route = parseV2Path(req.url ?? '/v2');
      const allowed = V2_METHODS[route.kind];
      if (!allowed.includes(req.method ?? '')) {
        const e = new PlatformError(ErrorCode.BadRequest, `${req.method} is not allowed here (${allowed.join(', ')})`, 'method', { Allow: allowed.join(', ') });
        const h = v2Error(e);
        return json(res, 405, h.body, h.headers);
      }
    } catch (e) {
      return this.fail(res, e);
    }
    try {
      switch (route.kind) {
        case 'live':
          return json(res, 200, { live: true });
        case 'ready':
          return await this.serverReady(res);
        case 'server':
          return json(res, 200, { name: 'mlfaas', version: this.opts.version, extensions: V2_EXTENSIONS });
        case 'modelReady':
          return await this.modelReady(res, route);
        case 'model':
          return await this.invoker.proxy(req, res, route.ref, route.path, { errors: v2Error });
        case 'infer':
          return await this.invoker.proxy(req, res, route.ref, route.path, {
            errors: v2Error,
            check: (body, r) => {
              // a compressed body (Content-Encoding: gzip, as Triton's client may send) is the runtime's to decode and judge
              const enc = r.headers['content-encoding'];
              if (enc === undefined || enc === 'identity') checkInferRequest(body, r.headers['inference-header-content-length']);
            },
          });
      }
    } catch (e) {
      this.fail(res, e);
    }
  }

  private async serverReady(res: ServerResponse): Promise<void> {
    const r = await checkRedis(this.redis, 1000);
    if (r.ok) return json(res, 200, { ready: true });
    json(res, 503, { error: `not ready: redis unavailable: ${r.reason}`, code: ErrorCode.Unavailable }, { 'Retry-After': '5' });
  }

  private async modelReady(res: ServerResponse, route: ModelRoute): Promise<void> {
    const { ref } = route;
    const s = await this.router.state(ref);
    if (!(s instanceof FunctionState)) throw functionNotFound(ref.name, ref.namespace);
    const name = ref.name;
    if (s.kind === 'training') {
      return json(res, 400, { error: `${s.label} is a training function: it serves no model`, code: ErrorCode.Validation, field: 'function' });
    }
    if (route.version !== undefined && route.version !== s.modelVersion) {
      return json(res, 404, { error: `model ${name} has no version ${route.version} (it serves version ${s.modelVersion})`, code: ErrorCode.NotFound,
        field: 'version' });
    }
    const why = notReadyReason(s);
    if (why) return json(res, 400, { error: `model ${name} is not ready: ${why}`, code: 'model_not_ready' });
    json(res, 200, { name, ready: true, ...(route.version !== undefined ? { version: route.version } : {}) });
  }

  private fail(res: ServerResponse, e: unknown): void {
    const h = v2Error(e);
    if (res.headersSent) {
      res.destroy();
      return;
    }
    json(res, h.status, h.body, h.headers);
  }
}

/**
 * Why a function cannot take a request now, or undefined when it can: a ready replica, or scaled
 * to zero (desired 0) and not crash-looping (a request wakes it). Pure.
 */
export function notReadyReason(s: Pick<FunctionState, 'upstreams' | 'desired' | 'crashError'>): string | undefined {
  if (s.upstreams.length > 0) return undefined;
  if (s.crashError) return `every replica crashed; last error: ${s.crashError}`;
  if (s.desired === 0) return undefined;
  return `none of its ${s.desired} replica(s) is ready yet`;
}
