/**
 * What the gateway answers before any route runs: requests Node's HTTP parser refuses, a body
 * declared larger than the limit, a missing Host, an unmet `Expect`. Every answer is JSON
 * `{"error":{"code","message","field"?}}` like the rest of the API, and closes the connection
 * (the request's remaining bytes are not worth reading).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { ErrorCode, HttpError, invalid, PlatformError, toHttp } from './errors';

const REASON: Record<number, string> = {
  400: 'Bad Request',
  405: 'Method Not Allowed',
  408: 'Request Timeout',
  413: 'Payload Too Large',
  414: 'URI Too Long',
  417: 'Expectation Failed',
  431: 'Request Header Fields Too Large',
};

/** Node's parser error codes (`err.code` on 'clientError') → status, error code, message, field. */
export function clientErrorAnswer(code: string | undefined): { status: number; code: ErrorCode; message: string; field?: string } {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return { status: 431, code: ErrorCode.BadRequest, message: 'request headers are larger than the server accepts', field: 'headers' };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { status: 408, code: ErrorCode.BadRequest, message: 'the request was not received in time' };
    case 'HPE_INVALID_CONTENT_LENGTH':
    case 'HPE_UNEXPECTED_CONTENT_LENGTH':
      return { status: 400, code: ErrorCode.BadRequest, message: 'Content-Length is not a single non-negative integer', field: 'Content-Length' };
    case 'HPE_INVALID_TRANSFER_ENCODING':
    case 'HPE_INVALID_CHUNK_SIZE':
      return { status: 400, code: ErrorCode.BadRequest, message: 'the chunked body is malformed', field: 'Transfer-Encoding' };
    case 'HPE_INVALID_METHOD':
      return { status: 400, code: ErrorCode.BadRequest, message: 'the request line has an unknown method', field: 'method' };
    case 'HPE_INVALID_URL':
      return { status: 400, code: ErrorCode.BadRequest, message: 'the request line has an invalid request target', field: 'path' };
    case 'HPE_INVALID_VERSION':
      return { status: 400, code: ErrorCode.BadRequest, message: 'the request line has an unsupported HTTP version', field: 'version' };
    case 'HPE_PAUSED_H2_UPGRADE':
      return { status: 400, code: ErrorCode.BadRequest, message: 'HTTP/2 is not served here; use HTTP/1.1', field: 'version' };
    case 'HPE_INVALID_CONSTANT':
      return { status: 400, code: ErrorCode.BadRequest, message: 'the request line is malformed' };
    case 'HPE_INVALID_EOF_STATE':
      return { status: 400, code: ErrorCode.BadRequest, message: 'the connection ended before the request was complete', field: 'body' };
    case 'HPE_INVALID_HEADER_TOKEN':
    case 'HPE_LF_EXPECTED':
    case 'HPE_CR_EXPECTED':
      return { status: 400, code: ErrorCode.BadRequest, message: 'the request headers are malformed', field: 'headers' };
    default:
      return { status: 400, code: ErrorCode.BadRequest, message: `malformed HTTP request${code ? ` (${code})` : ''}` };
  }
}

/** A complete raw HTTP/1.1 response carrying `h`'s JSON body, closing the connection. */
export function rawResponse(h: Pick<HttpError, 'status' | 'body'>): string {
  const body = JSON.stringify(h.body);
  return (
    `HTTP/1.1 ${h.status} ${REASON[h.status] ?? 'Error'}\r\n` +
    'Content-Type: application/json\r\n' +
    `Content-Length: ${Buffer.byteLength(body)}\r\n` +
    'Connection: close\r\n\r\n' +
    body
  );
}

/** `server.on('clientError')`: JSON instead of Node's empty answer, unless a response is already under way. */
export function onClientError(err: Error & { code?: string }, socket: Duplex): void {
  const inFlight = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (err.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent) {
    socket.destroy();
    return;
  }
  const a = clientErrorAnswer(err.code);
  const error: HttpError['body']['error'] = { code: a.code, message: a.message };
  if (a.field) error.field = a.field;
  socket.end(rawResponse({ status: a.status, body: { error } }));
}

/** `server.on('connect')`: this is not a proxy; CONNECT gets a JSON 405 instead of a dropped socket. */
export function onConnect(_req: IncomingMessage, socket: Duplex): void {
  const body = { error: { code: ErrorCode.BadRequest, message: 'CONNECT is not supported: this gateway is not a proxy', field: 'method' } };
  socket.end(rawResponse({ status: 405, body }));
}

/** Maps an error to an answer: `toHttp`, or a protocol's form of it. */
type ErrorFormat = (e: unknown) => Pick<HttpError, 'status' | 'headers'> & { body: unknown };

/**
 * Writes a JSON error on `res` (in `format`'s form: the Open Inference Protocol's on /v2) and
 * closes the connection (its request body is left unread).
 */
export function answerAndClose(res: ServerResponse, e: unknown, format: ErrorFormat = toHttp): void {
  const h = format(e);
  res.shouldKeepAlive = false;
  res.writeHead(h.status, { 'content-type': 'application/json', connection: 'close', ...h.headers });
  res.end(JSON.stringify(h.body));
}

/**
 * Checks every request before it is routed; returns the error to answer with, or undefined.
 * A declared `Content-Length` over `maxBodyBytes` is a 413 at once, whatever the route: Express's
 * body parser would otherwise wait to drain a body that may never come.
 */
export function refuseEarly(req: IncomingMessage, maxBodyBytes: number): PlatformError | undefined {
  const declared = Number(req.headers['content-length']);
  if (declared > maxBodyBytes) {
    return new PlatformError(ErrorCode.PayloadTooLarge, `Content-Length ${declared} exceeds the limit of ${maxBodyBytes} bytes`, 'body');
  }
  if (req.httpVersion === '1.1' && !req.headers.host) {
    return new PlatformError(ErrorCode.BadRequest, 'HTTP/1.1 requests need a Host header', 'Host');
  }
  return undefined;
}

/** `server.on('checkExpectation')`: only `100-continue` is supported (Node answers that itself). */
export function onUnmetExpectation(req: IncomingMessage, res: ServerResponse): void {
  const e = new PlatformError(ErrorCode.BadRequest, `Expect: ${String(req.headers.expect)} is not supported (only 100-continue)`, 'Expect');
  const h = toHttp(e);
  res.shouldKeepAlive = false;
  res.writeHead(417, { 'content-type': 'application/json', connection: 'close' });
  res.end(JSON.stringify(h.body));
}

/** Routes whose path parameter Express decodes: a malformed `%` escape there names this field. */
const PARAM_FIELDS: Array<[RegExp, string]> = [
  [/^\/system\/(function|scale-function)\//, 'name'],
  [/^\/system\/jobs\//, 'id'],
  [/^\/system\/namespace\//, 'namespace'],
];

/**
 * Express's `URIError` ("Failed to decode param") as a 400 naming the path parameter; any other
 * error is returned unchanged.
 */
export function paramDecodeError(err: unknown, path: string): unknown {
  if (!(err instanceof URIError)) return err;
  const field = PARAM_FIELDS.find(([re]) => re.test(path))?.[1] ?? 'path';
  return invalid(field, 'malformed percent-encoding in the path');
}
