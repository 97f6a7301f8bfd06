import { readFileSync, statSync } from 'node:fs';
import { authorized, same } from '../../gateway/auth';
import { passwordFile } from '../../gateway/auth-credentials';
import { testGateway, testRedis, TestPlatform } from '../helpers/platform';

const cfg = { enabled: true, user: 'admin', password: 's3cret' };
const basic = (u: string, p: string) => 'Basic ' + Buffer.from(`${u}:${p}`).toString('base64');

describe('basic auth', () => {
  test.each([
    { name: 'right credentials', header: basic('admin', 's3cret'), want: true },
    { name: 'wrong password', header: basic('admin', 'wrong'), want: false },
    { name: 'wrong user', header: basic('root', 's3cret'), want: false },
    { name: "faas-cli's empty Bearer", header: 'Bearer ', want: false },
    { name: 'bearer token', header: 'Bearer abc', want: false },
    { name: 'no header', header: undefined, want: false },
    { name: 'garbage', header: 'Basic !!!', want: false },
  ])('$name', ({ header, want }) => {
    expect(authorized(header, cfg)).toBe(want);
  });

  describe('on the gateway', () => {
    let redis: Awaited<ReturnType<typeof testRedis>>;
    let p: TestPlatform;
    beforeAll(async () => {
      redis = await testRedis();
      p = await testGateway(redis.url, { MLFAAS_BASIC_AUTH: 'true', MLFAAS_AUTH_PASSWORD: 's3cret' });
    });
    afterAll(async () => {
      await p?.stop();
      await redis?.stop();
    });

    test.each(['/system/functions', '/system/info', '/system/secrets', '/system/namespaces', '/system/function/x'])('%s needs credentials', async (path) => {
      const res = await p.get(path, { headers: { authorization: 'Bearer ' } });
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toMatch(/Basic/);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('unauthorized');
      const ok = await p.get(path, { headers: { authorization: basic('admin', 's3cret') } });
      expect(ok.status).not.toBe(401);
    });

    test.each(['/healthz', '/function/x', '/async-function/x', '/metrics', '/v2/health/live', '/v2', '/v2/models/x/ready'])('%s stays open', async (path) => {
      const res = await p.get(path, { method: path.startsWith('/async') ? 'POST' : 'GET' });
      expect(res.status).not.toBe(401);
    });
  });
});

describe('secure by default', () => {
  let redis: Awaited<ReturnType<typeof testRedis>>;
  let p: TestPlatform;
  beforeAll(async () => {
    redis = await testRedis();
    // the defaults a new user gets: no MLFAAS_BASIC_AUTH, no password configured
    p = await testGateway(redis.url, { MLFAAS_BASIC_AUTH: '' });
  });
  afterAll(async () => {
    await p?.stop();
    await redis?.stop();
  });
  const pw = () => readFileSync(passwordFile(p.dataDir), 'utf8').trim();

  test('auth is on: a generated password, saved 0600 in the data dir; not printed when stderr is not a terminal, the file and login line are', async () => {
    expect((await p.get('/system/functions')).status).toBe(401);
    expect(statSync(passwordFile(p.dataDir)).mode & 0o777).toBe(0o600);
    expect(pw()).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect((await p.get('/system/functions', { headers: { authorization: basic('admin', pw()) } })).status).toBe(200);
    const notices = p.gw.notices.join('\n');
    expect(notices).not.toContain(pw());
    expect(notices).toContain(`saved to ${passwordFile(p.dataDir)} (mode 0600; not printed: stderr is not a terminal)`);
    expect(notices).toMatch(/faas-cli login --username admin --password-stdin/);
  });

  test('a second gateway on the same Redis enforces the same password, and does not print it', async () => {
    const q = await testGateway(redis.url, { MLFAAS_BASIC_AUTH: '', MLFAAS_AGENT: 'false' });
    try {
      expect((await q.get('/system/functions', { headers: { authorization: basic('admin', pw()) } })).status).toBe(200);
      expect(readFileSync(passwordFile(q.dataDir), 'utf8').trim()).toBe(pw());
      expect(q.gw.notices.join('\n')).not.toContain(pw());
    } finally {
      await q.stop();
    }
  });

  test('a cross-site form post cannot deploy: text/plain and form bodies get 415, even with auth off', async () => {
    const open = await testGateway(redis.url, { MLFAAS_BASIC_AUTH: 'false', MLFAAS_AGENT: 'false' });
    try {
      expect(open.gw.notices.join('\n')).toMatch(/WARNING: basic auth is OFF/);
      const body = JSON.stringify({ service: 'pwn', image: 'ghcr.io/openfaas/alpine:latest', envProcess: 'touch /tmp/pwned' });
      for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x']) {
        const res = await open.get('/system/functions', { method: 'POST', body, headers: { 'content-type': type } });
        expect(res.status).toBe(415);
        expect(((await res.json()) as { error: { field: string } }).error.field).toBe('Content-Type');
      }
      const noType = await open.get('/system/functions', { method: 'POST', body: new Blob([body]) });
      expect(noType.status).toBe(415);
      expect(await open.gw.provider.get({ name: 'pwn', namespace: 'openfaas-fn' })).toBeUndefined();
      // a page on another origin is refused whatever it sends; the gateway's own origin is fine
      const evil = await open.json('GET', '/system/info', undefined, { origin: 'http://evil.example' });
      expect(evil.status).toBe(403);
      expect(((await evil.json()) as { error: { field: string } }).error.field).toBe('Origin');
      expect((await open.get('/system/info', { headers: { origin: 'null' } })).status).toBe(403);
      expect((await open.get('/system/info', { headers: { origin: `http://127.0.0.1:${open.gw.port}` } })).status).toBe(200);
      expect((await open.get('/system/info')).status).toBe(200);
    } finally {
      await open.stop();
    }
  });
});

describe('credential comparison', () => {
  test('different lengths compare false without throwing (digests of equal size are compared)', () => {
    expect(same('a', 'a')).toBe(true);
    expect(same('a', 'ab')).toBe(false);
    expect(same('', 'x'.repeat(1000))).toBe(false);
  });
  test('an empty configured password never authorizes', () => {
    expect(authorized(basic('admin', ''), { enabled: true, user: 'admin', password: '' })).toBe(false);
  });
});
