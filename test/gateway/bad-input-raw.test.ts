/**
 * What Node's HTTP server sees before Express does, fed bad bytes on a raw socket: every answer
 * is JSON `{error:{code,message,field?}}`, arrives at once (no hang), and closes the connection.
 */
import { rawRequest } from '../helpers/raw-http';
import { testGateway, testRedis, TestPlatform } from '../helpers/platform';

interface RawCase {
  name: string;
  request: string;
  halfClose?: boolean;
  status: number;
  code: string;
  field?: string;
  /** Answered by a route (the connection may stay open); otherwise refused before routing, closing it. */
  routed?: boolean;
}

const H = 'Host: 127.0.0.1\r\n';
const JSON_CT = 'Content-Type: application/json\r\n';
/** One byte over the default MLFAAS_MAX_BODY_BYTES (16 MiB), declared and never sent. */
const LYING_LENGTH = 16 * 1024 * 1024 + 1;

const lyingLength = (method: string, path: string): RawCase => ({
  name: `${method} ${path} with Content-Length ${LYING_LENGTH} and no body`,
  request: `${method} ${path} HTTP/1.1\r\n${H}${JSON_CT}Content-Length: ${LYING_LENGTH}\r\n\r\n`,
  status: 413,
  code: 'payload_too_large',
  field: 'body',
});

const CASES: RawCase[] = [
  ...[
    ['POST', '/system/functions'],
    ['PUT', '/system/functions'],
    ['DELETE', '/system/functions'],
    ['POST', '/system/scale-function/exists'],
    ['POST', '/system/secrets'],
    ['PUT', '/system/secrets'],
    ['DELETE', '/system/secrets'],
    ['POST', '/system/jobs'],
    ['POST', '/system/jobs?dryRun=true'],
    ['POST', '/system/namespace/x'],
    ['GET', '/system/info'],
    ['POST', '/function/exists'],
    ['POST', '/function/ghost'],
    ['PUT', '/function/exists/sub/path?q=1'],
    ['POST', '/async-function/exists'],
    ['POST', '/async-function/ghost'],
    ['POST', '/healthz'],
  ].map(([m, p]) => lyingLength(m, p)),
  { name: 'garbage request line', request: 'GARBAGE\r\n\r\n', status: 400, code: 'bad_request', field: 'method' },
  { name: 'unknown method token', request: `BREW /system/info HTTP/1.1\r\n${H}\r\n`, status: 400, code: 'bad_request', field: 'method' },
  { name: 'space inside the path', request: `GET /sys tem HTTP/1.1\r\n${H}\r\n`, status: 400, code: 'bad_request' },
  { name: 'HTTP version 9.9', request: `GET /healthz HTTP/9.9\r\n${H}\r\n`, status: 400, code: 'bad_request', field: 'version' },
  { name: 'HTTP/2 preface on HTTP/1.1', request: 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', status: 400, code: 'bad_request', field: 'version' },
  { name: 'header line without colon', request: `GET /healthz HTTP/1.1\r\n${H}NoColonHere\r\n\r\n`, status: 400, code: 'bad_request', field: 'headers' },
  { name: 'control character in a header value', request: `GET /healthz HTTP/1.1\r\n${H}X-A: a\x01b\r\n\r\n`, status: 400, code: 'bad_request',
    field: 'headers' },
  { name: 'huge header (431)', request: `GET /healthz HTTP/1.1\r\n${H}X-Big: ${'a'.repeat(20000)}\r\n\r\n`, status: 431, code: 'bad_request',
    field: 'headers' },
  { name: 'huge header on /system (431)', request: `GET /system/functions HTTP/1.1\r\n${H}X-Big: ${'a'.repeat(70000)}\r\n\r\n`, status: 431,
    code: 'bad_request', field: 'headers' },
  { name: 'many headers (431)',
    request: `GET /function/exists HTTP/1.1\r\n${H}${Array.from({ length: 2000 }, (_, i) => `X-H${i}: ${'v'.repeat(10)}\r\n`).join('')}\r\n`, status: 431,
    code: 'bad_request', field: 'headers' },
  { name: 'huge path (431)', request: `GET /function/${'a'.repeat(20000)} HTTP/1.1\r\n${H}\r\n`, status: 431, code: 'bad_request', field: 'headers' },
  { name: 'Content-Length not a number', request: `POST /system/functions HTTP/1.1\r\n${H}Content-Length: abc\r\n\r\n`, status: 400, code: 'bad_request',
    field: 'Content-Length' },
  { name: 'negative Content-Length', request: `POST /system/functions HTTP/1.1\r\n${H}Content-Length: -5\r\n\r\n`, status: 400, code: 'bad_request',
    field: 'Content-Length' },
  { name: 'two different Content-Lengths', request: `POST /system/functions HTTP/1.1\r\n${H}Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}`, status: 400,
    code: 'bad_request', field: 'Content-Length' },
  { name: 'Content-Length with chunked', request: `POST /system/functions HTTP/1.1\r\n${H}Content-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`,
    status: 400, code: 'bad_request', field: 'Transfer-Encoding' },
  { name: 'malformed chunk size', request: `POST /system/functions HTTP/1.1\r\n${H}${JSON_CT}Transfer-Encoding: chunked\r\n\r\nzz\r\n`, status: 400,
    code: 'bad_request', field: 'Transfer-Encoding' },
  { name: 'body shorter than Content-Length, client half-closes (system)',
    request: `POST /system/functions HTTP/1.1\r\n${H}${JSON_CT}Content-Length: 100\r\n\r\n{"a":`, halfClose: true, status: 400, code: 'bad_request',
    field: 'body' },
  { name: 'body shorter than Content-Length, client half-closes (function)', request: `POST /function/exists HTTP/1.1\r\n${H}Content-Length: 100\r\n\r\nabc`,
    halfClose: true, status: 400, code: 'bad_request', field: 'body' },
  { name: 'HTTP/1.1 without Host', request: 'GET /system/info HTTP/1.1\r\n\r\n', status: 400, code: 'bad_request', field: 'Host' },
  { name: 'HTTP/1.1 without Host on /function', request: 'GET /function/exists HTTP/1.1\r\n\r\n', status: 400, code: 'bad_request', field: 'Host' },
  { name: 'unsupported Expect', request: `POST /system/functions HTTP/1.1\r\n${H}${JSON_CT}Expect: 200-ok\r\nContent-Length: 2\r\n\r\n{}`, status: 417,
    code: 'bad_request', field: 'Expect' },
  { name: 'CONNECT', request: 'CONNECT 127.0.0.1:22 HTTP/1.1\r\nHost: 127.0.0.1:22\r\n\r\n', status: 405, code: 'bad_request', field: 'method' },
  { name: 'malformed percent-encoding in /system/function', request: `GET /system/function/%zz HTTP/1.1\r\n${H}\r\n`, status: 400, code: 'validation_failed',
    field: 'name', routed: true },
  { name: 'malformed percent-encoding in /function', request: `GET /function/%zz HTTP/1.1\r\n${H}\r\n`, status: 400, code: 'validation_failed', field: 'name',
    routed: true },
];

describe('bad bytes on a raw socket', () => {
  let redis: Awaited<ReturnType<typeof testRedis>>;
  let p: TestPlatform;
  beforeAll(async () => {
    redis = await testRedis();
    p = await testGateway(redis.url, { MLFAAS_BASIC_AUTH: 'false' }); // default MLFAAS_MAX_BODY_BYTES
    const { seedEchoHttp } = await import('../helpers/images');
    const { aFunction } = await import('../helpers/fixtures');
    seedEchoHttp(p.images);
    expect((await p.json('POST', '/system/functions', aFunction('exists').minScale(0).build())).status).toBe(202);
  });
  afterAll(async () => {
    await p?.stop();
    await redis?.stop();
  });

  test.each(CASES)('$name → $status $code', async (c) => {
    const a = await rawRequest(p.gw.port, c.request, { halfClose: c.halfClose });
    expect({ done: a.done, status: a.status }).toEqual({ done: true, status: c.status });
    expect(a.headers['content-type']).toMatch(/^application\/json/);
    const err = (JSON.parse(a.body) as { error: { code: string; message: string; field?: string } }).error;
    expect(err.code).toBe(c.code);
    expect(err.message.length).toBeGreaterThan(5);
    expect(err.field).toBe(c.field);
    if (!c.routed) expect(a.headers.connection?.toLowerCase()).toBe('close');
  });

  it('still serves after all of that', async () => {
    const res = await p.get('/healthz');
    expect(res.status).toBe(200);
  });
});
