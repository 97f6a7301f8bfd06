import { isRedisUnavailable, isStorageFull } from './lib/redis-health';

/**
 * Typed errors with one code enum and one mapping to HTTP status (see `toHttp`).
 * Every 4xx body is JSON `{ "error": { "code", "message", "field"? } }`.
 */
export enum ErrorCode {
  BadRequest = 'bad_request',
  Validation = 'validation_failed',
  MalformedJson = 'malformed_json',
  Unauthorized = 'unauthorized',
  Forbidden = 'forbidden',
  UnsupportedMediaType = 'unsupported_media_type',
  NotFound = 'not_found',
  FunctionNotFound = 'function_not_found',
  Conflict = 'conflict',
  ImageNotFound = 'image_not_found',
  PayloadTooLarge = 'payload_too_large',
  QueueFull = 'queue_full',
  NotImplemented = 'not_implemented',
  UpstreamTimeout = 'upstream_timeout',
  /** The client did not send its request body within the function's `read_timeout` (issue 25): 408. */
  RequestTimeout = 'request_timeout',
  UpstreamUnavailable = 'upstream_unavailable',
  NoReplicas = 'no_replicas',
  /** The platform's store (Redis) cannot be reached: 503 with Retry-After. */
  Unavailable = 'unavailable',
  /** The store refuses writes because its disk is full (or it is out of memory): 503, nothing was written. */
  StorageFull = 'storage_full',
  Internal = 'internal',
}

const STATUS: Record<ErrorCode, number> = {
  [ErrorCode.BadRequest]: 400,
  [ErrorCode.Validation]: 400,
  [ErrorCode.MalformedJson]: 400,
  [ErrorCode.ImageNotFound]: 400,
  [ErrorCode.Unauthorized]: 401,
  [ErrorCode.Forbidden]: 403,
  [ErrorCode.UnsupportedMediaType]: 415,
  [ErrorCode.NotFound]: 404,
  [ErrorCode.FunctionNotFound]: 404,
  [ErrorCode.Conflict]: 409,
  [ErrorCode.PayloadTooLarge]: 413,
  [ErrorCode.QueueFull]: 429,
  [ErrorCode.Internal]: 500,
  [ErrorCode.NotImplemented]: 501,
  [ErrorCode.UpstreamUnavailable]: 502,
  [ErrorCode.NoReplicas]: 503,
  [ErrorCode.Unavailable]: 503,
  [ErrorCode.StorageFull]: 503,
  [ErrorCode.UpstreamTimeout]: 504,
  [ErrorCode.RequestTimeout]: 408,
};

export class PlatformError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly field?: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'PlatformError';
  }
  get status(): number {
    return STATUS[this.code];
  }
}

/** A request field failed validation; `field` is its JSON path, e.g. `labels.com.openfaas.scale.min`. */
export const invalid = (field: string, message: string) =>
  new PlatformError(ErrorCode.Validation, `${field}: ${message}`, field);

export const notFound = (what: string) => new PlatformError(ErrorCode.NotFound, what);

export const functionNotFound = (name: string, namespace: string, field = 'name') =>
  new PlatformError(ErrorCode.FunctionNotFound, `function not found: ${name}.${namespace}`, field);

/** Redis is unreachable or did not answer in time: 503, try again shortly. */
export const redisUnavailable = (detail: string) =>
  new PlatformError(ErrorCode.Unavailable, `redis unavailable: ${detail}`, undefined, { 'Retry-After': '5' });

/** Redis refused a write it cannot persist (disk full, out of memory): 503, try again later. */
export const storageFull = (detail: string) =>
  new PlatformError(
    ErrorCode.StorageFull,
    `storage full: the platform's store refuses writes until space is freed under its data dir (${detail})`,
    undefined,
    { 'Retry-After': '30' },
  );

export interface HttpError {
  status: number;
  headers: Record<string, string>;
  body: { error: { code: string; message: string; field?: string } };
}

/** The single mapping from any thrown value to an HTTP answer. Unknown errors become 500. */
export function toHttp(err: unknown): HttpError {
  if (err instanceof PlatformError) {
    const error: HttpError['body']['error'] = { code: err.code, message: err.message };
    if (err.field) error.field = err.field;
    return { status: err.status, headers: err.headers, body: { error } };
  }
  if (isRedisUnavailable(err)) return toHttp(redisUnavailable((err as Error).message));
  if (isStorageFull(err)) return toHttp(storageFull((err as Error).message));
  const e = err as { type?: string; status?: number; message?: string };
  // body-parser errors carry `type` and `status`
  if (e && e.type === 'entity.parse.failed') {
    return plain(400, ErrorCode.MalformedJson, `request body is not valid JSON: ${e.message}`, 'body');
  }
  if (e && e.type === 'entity.too.large') {
    return plain(413, ErrorCode.PayloadTooLarge, 'request body exceeds the size limit', 'body');
  }
  if (e && typeof e.status === 'number' && e.status >= 400 && e.status < 500) {
    return plain(e.status, ErrorCode.BadRequest, e.message ?? 'bad request');
  }
  return plain(500, ErrorCode.Internal, (e && e.message) || 'internal error');
}

function plain(status: number, code: ErrorCode, message: string, field?: string): HttpError {
  const error: HttpError['body']['error'] = { code, message };
  if (field) error.field = field;
  return { status, headers: {}, body: { error } };
}
