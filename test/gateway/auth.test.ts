import { authorized } from '../../gateway/auth';
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

    test.each(['/healthz', '/function/x', '/async-function/x', '/metrics'])('%s stays open', async (path) => {
      const res = await p.get(path, { method: path.startsWith('/async') ? 'POST' : 'GET' });
      expect(res.status).not.toBe(401);
    });
  });
});
