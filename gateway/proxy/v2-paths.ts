/**
 * The Open Inference Protocol's (KServe v2 REST) paths on the gateway, and its error body.
 * Pure: a URL in, a route out; an error in, the protocol's answer out.
 *
 *   GET  /v2/health/live            GET /v2/health/ready           GET /v2
 *   GET  /v2/models/{name}[/versions/{v}]
 *   GET  /v2/models/{name}[/versions/{v}]/ready
 *   POST /v2/models/{name}[/versions/{v}]/infer
 *
 * `{name}` is a function's name, `name.namespace` accepted as on `/function/`.
 */
import { ErrorCode, HttpError, invalid, PlatformError, toHttp } from '../errors';
import { checkDnsLabel, FunctionRef, splitQualified } from '../lib/names';

export type V2Route =
  | { kind: 'live' | 'ready' | 'server' }
  | { kind: 'model' | 'modelReady' | 'infer'; ref: FunctionRef; version?: string; /** the path and query as received, forwarded as is */ path: string };

/** What each route accepts. */
export const V2_METHODS: Record<V2Route['kind'], string[]> = {
  live: ['GET', 'HEAD'],
  ready: ['GET', 'HEAD'],
  server: ['GET', 'HEAD'],
  model: ['GET', 'HEAD'],
  modelReady: ['GET', 'HEAD'],
  infer: ['POST'],
};

const VERSION = /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/;

const noRoute = (path: string) => new PlatformError(ErrorCode.NotFound, `no Open Inference Protocol route for ${path}`, 'path');

function decode(seg: string, field: string): string {
  try {
    return decodeURIComponent(seg);
  } catch {
    throw invalid(field, 'malformed percent-encoding in the path');
  }
}

/** Parses a `/v2...` URL; throws a 404 for a path the protocol does not have, a 400 naming `name`/`namespace`/`version`. */
export function parseV2Path(url: string): V2Route {
  const q = url.indexOf('?');
  const pathOnly = q < 0 ? url : url.slice(0, q);
  const parts = pathOnly.split('/').slice(1); // ['v2', ...]
  if (parts[parts.length - 1] === '' && parts.length > 1) parts.pop(); // one trailing slash
  if (parts[0] !== 'v2') throw noRoute(pathOnly);
  if (parts.length === 1) return { kind: 'server' };
  if (parts[1] === 'health' && parts.length === 3 && (parts[2] === 'live' || parts[2] === 'ready')) return { kind: parts[2] };
  if (parts[1] !== 'models' || parts.length < 3) throw noRoute(pathOnly);
  const seg = decode(parts[2], 'name');
  const ref = splitQualified(seg);
  checkDnsLabel(ref.name, 'name');
  checkDnsLabel(ref.namespace, 'namespace');
  let rest = parts.slice(3);
  let version: string | undefined;
  if (rest[0] === 'versions') {
    if (rest.length < 2) throw invalid('version', 'the path names no version after /versions/');
    version = decode(rest[1], 'version');
    if (!VERSION.test(version)) throw invalid('version', `"${version}" is not a version (letters, digits, '.', '_', '-'; at most 63)`);
    rest = rest.slice(2);
  }
  const route = (kind: 'model' | 'modelReady' | 'infer'): V2Route => ({ kind, ref, path: url, ...(version !== undefined ? { version } : {}) });
  if (rest.length === 0) return route('model');
  if (rest.length === 1 && rest[0] === 'ready') return route('modelReady');
  if (rest.length === 1 && rest[0] === 'infer') return route('infer');
  throw noRoute(pathOnly);
}

/** The protocol's error body, `{"error": "<message>"}`, plus our `code` and `field` (clients read `error` only). */
export interface V2ErrorBody {
  error: string;
  code: string;
  field?: string;
  [extra: string]: unknown;
}

/**
 * Any error as the protocol answers it: the same status as `/function/` gives it (404 unknown
 * model, 400 bad request or training function, 413, 429 queue full, 502, 503 no replicas, 504
 * timeout), the body `{"error": message, "code", "field"?}`.
 */
export function v2Error(e: unknown): { status: number; headers: Record<string, string>; body: V2ErrorBody } {
  const h: HttpError = toHttp(e);
  const body: V2ErrorBody = { error: h.body.error.message, code: h.body.error.code };
  if (h.body.error.field) body.field = h.body.error.field;
  return { status: h.status, headers: h.headers, body };
}
