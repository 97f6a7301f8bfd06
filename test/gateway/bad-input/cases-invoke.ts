/** `/function/{name}[.{ns}][/path]` and `/async-function/…`, including the X-Callback-Url policy. */
import { BAD_LABELS, Case, fnNotFound, invalid, overBodyLimit } from './case';

/** Path segments that name no function, and the field the error names. */
const BAD_SEGMENTS: Array<{ seg: string; field: string }> = [
  ...BAD_LABELS.filter((v) => !v.includes('.')).map((v) => ({ seg: encodeURIComponent(v), field: 'name' })),
  { seg: '', field: 'name' },
  { seg: '%zz', field: 'name' },
  { seg: '%E0', field: 'name' },
  { seg: 'a%2Fb', field: 'name' },
  { seg: '.exists', field: 'name' },
  { seg: 'x.y.z', field: 'name' },
  { seg: 'exists.', field: 'namespace' },
  { seg: 'exists.BAD', field: 'namespace' },
  { seg: 'exists.a_b', field: 'namespace' },
  { seg: `exists.${'n'.repeat(64)}`, field: 'namespace' },
];

/** Callback URLs the policy refuses (no MLFAAS_CALLBACK_ALLOW set). */
export const BAD_CALLBACKS = [
  'not a url',
  'http://[::1',
  '/relative/cb',
  'http://',
  'file:///etc/passwd',
  'gopher://127.0.0.1:6379/_INFO',
  'ftp://example.com/x',
  'javascript:alert(1)',
  'data:text/plain,hi',
  'http://169.254.169.254/latest/meta-data/',
  'http://169.254.0.1:8080/',
  'http://2852039166/',
  'http://[fe80::1]/',
  'http://[::ffff:169.254.169.254]/',
  'http://metadata.google.internal/computeMetadata/v1/',
  'http://METADATA.GOOGLE.INTERNAL./',
];

export function invokeCases(): Case[] {
  const cases: Case[] = [];
  for (const prefix of ['/function/', '/async-function/']) {
    const call = (name: string, method: string, path: string, want: Omit<Case, 'name' | 'method' | 'path'>): Case => ({
      name: `${method} ${prefix}${name}`,
      method,
      path: prefix + path,
      ...(method === 'GET' || method === 'HEAD' ? {} : { raw: 'x' }),
      ...want,
    });
    cases.push(
      ...BAD_SEGMENTS.map(({ seg, field }) => call(seg || '(empty)', 'POST', seg, invalid(field))),
      ...BAD_SEGMENTS.slice(0, 3).map(({ seg, field }) => call(`${seg}/sub/path?q=1`, 'POST', `${seg}/sub/path?q=1`, invalid(field))),
      ...['POST', 'GET', 'PUT', 'DELETE', 'PATCH'].flatMap((m) => [
        call('ghost', m, 'ghost', fnNotFound),
        call('ghost.nope', m, 'ghost.nope', fnNotFound),
        call('%zz', m, '%zz', invalid('name')),
        call('trainer (a training function)', m, 'trainer', invalid('function')),
      ]),
      call('exists.nope (other namespace)', 'POST', 'exists.nope', fnNotFound),
      call('trainer/sub/path', 'POST', 'trainer/sub/path', invalid('function')),
      call('exists, body over MLFAAS_MAX_BODY_BYTES', 'POST', 'exists', { raw: overBodyLimit(), status: 413, code: 'payload_too_large', field: 'body' }),
      call('ghost, body over MLFAAS_MAX_BODY_BYTES', 'POST', 'ghost', { raw: overBodyLimit(), status: 413, code: 'payload_too_large', field: 'body' }),
    );
  }
  const cb = (url: string, fn: string, want: Omit<Case, 'name' | 'method' | 'path'>): Case => ({
    name: `POST /async-function/${fn} X-Callback-Url ${JSON.stringify(url)}`,
    method: 'POST',
    path: `/async-function/${fn}`,
    raw: 'x',
    headers: { 'x-callback-url': url },
    ...want,
  });
  cases.push(
    ...BAD_CALLBACKS.map((url) => cb(url, 'exists', invalid('X-Callback-Url'))),
    // the header is judged before the function is looked up
    cb('file:///etc/passwd', 'ghost', invalid('X-Callback-Url')),
    cb('gopher://127.0.0.1:6379/_INFO', 'trainer', invalid('X-Callback-Url')),
    cb('http://127.0.0.1:9/cb', 'ghost', fnNotFound),
    cb('http://127.0.0.1:9/cb', 'trainer', invalid('function')),
  );
  return cases;
}
