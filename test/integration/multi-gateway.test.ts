import { aFunction } from '../helpers/fixtures';
import { seedEchoHttp } from '../helpers/images';
import { eventually, testGateway, testRedis, TestPlatform } from '../helpers/platform';

describe('two gateways on one Redis', () => {
  let redis: Awaited<ReturnType<typeof testRedis>>;
  let a: TestPlatform;
  let b: TestPlatform;

  beforeAll(async () => {
    redis = await testRedis();
    a = await testGateway(redis.url);
    b = await testGateway(redis.url, { MLFAAS_AGENT: 'false' }, a.dataDir);
    seedEchoHttp(a.images);
  });
  afterAll(async () => {
    await b?.stop();
    await a?.stop();
    await redis?.stop();
  });

  it('serves the same functions from either gateway', async () => {
    expect((await a.json('POST', '/system/functions', aFunction('shared').minScale(1).build())).status).toBe(202);
    const listed = (await (await b.get('/system/functions')).json()) as Array<{ name: string }>;
    expect(listed.map((f) => f.name)).toEqual(['shared']);
    const res = await eventually(async () => {
      const r = await b.get('/function/shared', { method: 'POST', body: 'via-b' });
      return r.status === 200 ? r : undefined;
    });
    expect(((await res!.json()) as { body: string }).body).toBe('via-b');
    expect((await a.get('/function/shared')).status).toBe(200);
    // invocation counts from both gateways add up in Redis
    const count = await eventually(async () => {
      const f = (await (await a.get('/system/function/shared')).json()) as { invocationCount: number };
      return f.invocationCount >= 2 ? f.invocationCount : 0;
    }, 5000);
    expect(count).toBeGreaterThanOrEqual(2);
  });

  it('lets only one agent run replicas', async () => {
    expect(a.gw.agent!.isLeader).toBe(true);
    expect(b.gw.agent).toBeUndefined();
    const eps = await a.gw.provider.endpoints({ name: 'shared', namespace: 'openfaas-fn' });
    expect(eps).toHaveLength(1);
    expect(eps[0].agent).toBe(a.gw.agent!.id);
  });

  it('sees a scale through the other gateway at once (change feed)', async () => {
    expect((await b.json('POST', '/system/scale-function/shared', { serviceName: 'shared', replicas: 2 })).status).toBe(202);
    expect(await eventually(async () => [...a.gw.router.all()].find((s) => s.ref.name === 'shared')?.upstreams.length === 2, 20000)).toBe(true);
    expect(await eventually(async () => [...b.gw.router.all()].find((s) => s.ref.name === 'shared')?.upstreams.length === 2, 5000)).toBe(true);
  });

  it('streams logs with follow from the gateway that does not run the replicas', async () => {
    const ac = new AbortController();
    const res = await b.get('/system/logs?name=shared&follow=true&tail=0', { signal: ac.signal });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/ndjson/);
    const reader = res.body!.getReader();
    // a new replica's start line arrives while we follow
    await a.gw.provider.scale({ name: 'shared', namespace: 'openfaas-fn' }, 3);
    let text = '';
    const deadline = Date.now() + 20000;
    while (!/echo-http ready/.test(text) && Date.now() < deadline) {
      const { value, done } = await reader.read();
      if (done) break;
      text += Buffer.from(value).toString();
    }
    ac.abort();
    const line = JSON.parse(text.split('\n').find((l) => l.includes('echo-http ready'))!) as Record<string, string>;
    expect(line).toEqual(expect.objectContaining({ name: 'shared', namespace: 'openfaas-fn', instance: expect.stringMatching(/^shared-/) }));
  });

  it('a gateway that cannot listen fails cleanly, leaving the others serving', async () => {
    await expect(testGateway(redis.url, { MLFAAS_PORT: String(a.gw.port), MLFAAS_AGENT: 'false' }, a.dataDir)).rejects.toThrow(/EADDRINUSE/);
    expect((await a.get('/function/shared')).status).toBe(200);
  });

  it('mounts secrets into replicas', async () => {
    expect((await b.json('POST', '/system/secrets', { name: 'api-key', value: 's3cr3t' })).status).toBe(201);
    expect((await a.json('POST', '/system/functions', aFunction('withsecret').minScale(1).secrets('api-key').build())).status).toBe(202);
    const res = await eventually(async () => {
      const r = await a.get('/function/withsecret/secret/api-key');
      return r.status === 200 ? r.text() : undefined;
    });
    expect(res).toBe('s3cr3t');
  });
});
