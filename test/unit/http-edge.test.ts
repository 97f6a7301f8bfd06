import { clientErrorAnswer, paramDecodeError, rawResponse } from '../../gateway/http-edge';
import { PlatformError } from '../../gateway/errors';

describe('clientErrorAnswer', () => {
  test.each([
    { code: 'HPE_HEADER_OVERFLOW', status: 431, field: 'headers' },
    { code: 'ERR_HTTP_REQUEST_TIMEOUT', status: 408, field: undefined },
    { code: 'HPE_INVALID_METHOD', status: 400, field: 'method' },
    { code: 'HPE_INVALID_URL', status: 400, field: 'path' },
    { code: 'HPE_INVALID_CONTENT_LENGTH', status: 400, field: 'Content-Length' },
    { code: 'HPE_UNEXPECTED_CONTENT_LENGTH', status: 400, field: 'Content-Length' },
    { code: 'HPE_INVALID_CHUNK_SIZE', status: 400, field: 'Transfer-Encoding' },
    { code: 'HPE_INVALID_EOF_STATE', status: 400, field: 'body' },
    { code: 'HPE_PAUSED_H2_UPGRADE', status: 400, field: 'version' },
    { code: 'HPE_SOMETHING_NEW', status: 400, field: undefined },
    { code: undefined, status: 400, field: undefined },
  ])('$code → $status', ({ code, status, field }) => {
    const a = clientErrorAnswer(code);
    expect(a.status).toBe(status);
    expect(a.field).toBe(field);
    expect(a.message.length).toBeGreaterThan(5);
  });
});

describe('rawResponse', () => {
  it('is a complete HTTP/1.1 response with a JSON body, its length, and Connection: close', () => {
    const r = rawResponse({ status: 431, body: { error: { code: 'bad_request', message: 'too big', field: 'headers' } } });
    const [head, body] = r.split('\r\n\r\n');
    expect(head.split('\r\n'))
      .toEqual(['HTTP/1.1 431 Request Header Fields Too Large', 'Content-Type: application/json', `Content-Length: ${Buffer.byteLength(body)}`,
        'Connection: close']);
    expect(JSON.parse(body)).toEqual({ error: { code: 'bad_request', message: 'too big', field: 'headers' } });
  });
});

describe('paramDecodeError', () => {
  test.each([
    { path: '/system/function/%zz', field: 'name' },
    { path: '/system/scale-function/%E0', field: 'name' },
    { path: '/system/jobs/%zz/events', field: 'id' },
    { path: '/system/namespace/%zz', field: 'namespace' },
    { path: '/system/other/%zz', field: 'path' },
  ])('$path → field $field', ({ path, field }) => {
    const e = paramDecodeError(new URIError('Failed to decode param'), path);
    expect(e).toBeInstanceOf(PlatformError);
    expect((e as PlatformError).field).toBe(field);
    expect((e as PlatformError).status).toBe(400);
  });
  it('passes other errors through', () => {
    const e = new Error('x');
    expect(paramDecodeError(e, '/system/function/x')).toBe(e);
  });
});
