/**
 * The Open Inference Protocol on the gateway, end to end (real gateway, real Redis, real replica
 * processes): routing, forwarding to the replica at the same /v2 path, the same metering as
 * /function/, model readiness, and the protocol's error bodies (issue 25). The model itself is
 * the echo function here (it shows what reached the replica); the ml-inference runtime's answers
 * are tested in v2-model.test.ts.
 */
import { aFunction } from '../helpers/fixtures';
import { seedEchoHttp, seedImage } from '../helpers/images';
import { eventually, testGateway, testRedis, TestPlatform } from '../helpers/platform';

type Echo = { method: string; path: string; query: string; body: string; callId: string | null };
const INFER = { id: 'r1', inputs: [{ name: 'x', datatype: 'FP32', shape: [1, 2], data: [0.5, 1.5] }] };

describe('/v2 on the gateway (real redis, real replicas)', () => {
  let redis: Awaited<ReturnType<typeof testRedis>>;
  let p: TestPlatform;
  const ready = (name: string, n: number) =>
    eventually(async () => (await p.gw.provider.endpoints({ name, namespace: 'openfaas-fn' })).filter((r) => r.state === 'ready').length === n, 20000);
  const metric = async (re: RegExp) => {
    const m = (await (await p.get('/metrics')).text()).match(re);
    return m ? Number(m[1]) : 0;
  };

  beforeAll(async () => {
    redis = await testRedis();
    p = await testGateway(redis.url, { MLFAAS_MAX_BODY_BYTES: '65536' });
    seedEchoHttp(p.images);
    seedImage(p.images, 'test/crash:1', { 'index.js': 'process.exit(1)\n' }, { language: 'node', kind: 'inference', mode: 'http', fprocess: 'node index.js' });
    for (const b of [aFunction('echo').minScale(1), aFunction('sleepy').minScale(0), aFunction('crashy').image('test/crash:1').minScale(1)]) {
      expect((await p.json('POST', '/system/functions', b.build())).status).toBe(202);
    }
    expect(await ready('echo', 1)).toBe(true);
  }, 60_000);
  afterAll(async () => {
    await p?.stop();
    await redis?.stop();
  });

  it('answers health and server metadata itself', async () => {
    const live = await p.get('/v2/health/live');
    expect([live.status, await live.json()]).toEqual([200, { live: true }]);
    const rd = await p.get('/v2/health/ready');
    expect([rd.status, await rd.json()]).toEqual([200, { ready: true }]);
    const meta = await p.get('/v2');
    expect(meta.status).toBe(200);
    expect(await meta.json()).toEqual({ name: 'mlfaas', version: expect.any(String), extensions: ['binary_tensor_data'] });
  });

  it('forwards infer to a replica at the same path, with the /function/ headers and metering', async () => {
    const before = await metric(/gateway_function_invocation_total\{function_name="echo.openfaas-fn",code="200"\} (\d+)/);
    const res = await p.json('POST', '/v2/models/echo/infer', INFER, { 'x-call-id': 'call-v2' });
    expect(res.status).toBe(200);
    const e = (await res.json()) as Echo;
    expect(e).toEqual(expect.objectContaining({ method: 'POST', path: '/v2/models/echo/infer', callId: 'call-v2' }));
    expect(JSON.parse(e.body)).toEqual(INFER);
    expect(res.headers.get('x-call-id')).toBe('call-v2');
    expect(Number(res.headers.get('x-duration-seconds'))).toBeGreaterThan(0);
    const v = await p.json('POST', '/v2/models/echo.openfaas-fn/versions/1/infer?trace=1', INFER);
    expect(((await v.json()) as Echo)).toEqual(expect.objectContaining({ path: '/v2/models/echo.openfaas-fn/versions/1/infer', query: '?trace=1' }));
    const meta = (await (await p.get('/v2/models/echo')).json()) as Echo;
    expect([meta.method, meta.path]).toEqual(['GET', '/v2/models/echo']);
    expect(await metric(/gateway_function_invocation_total\{function_name="echo.openfaas-fn",code="200"\} (\d+)/)).toBe(before + 3);
  });

  it('refuses a malformed infer body with a 400 naming the field, before any replica sees it', async () => {
    const res = await p.get('/v2/models/echo/infer', { method: 'POST', body: '{"inputs": [{"name": "x"', headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: expect.stringMatching(/JSON/), code: 'validation_failed', field: 'body' });
    const mismatch = await p.json('POST', '/v2/models/echo/infer', { inputs: [{ ...INFER.inputs[0], shape: [2, 2] }] });
    expect([mismatch.status, ((await mismatch.json()) as { field: string }).field]).toEqual([400, 'inputs[0].data']);
  });

  it('answers the gateway\'s own errors in the protocol\'s form', async () => {
    const ghost = await p.json('POST', '/v2/models/ghost/infer', INFER);
    expect([ghost.status, await ghost.json()]).toEqual([404, { error: 'function not found: ghost.openfaas-fn', code: 'function_not_found', field: 'name' }]);
    const path = await p.get('/v2/models/echo/explain');
    expect([path.status, ((await path.json()) as { code: string }).code]).toEqual([404, 'not_found']);
    const method = await p.get('/v2/models/echo/infer');
    expect([method.status, method.headers.get('allow'), ((await method.json()) as { field: string }).field]).toEqual([405, 'POST', 'method']);
  });

  it('model ready: 200 with a ready replica or scaled to zero, 400 while crash-looping, 404 unknown; waking nothing', async () => {
    const r = await p.get('/v2/models/echo/ready');
    expect([r.status, await r.json()]).toEqual([200, { name: 'echo', ready: true }]);
    const zero = await p.get('/v2/models/sleepy/ready');
    expect([zero.status, await zero.json()]).toEqual([200, { name: 'sleepy', ready: true }]);
    expect((await p.gw.provider.endpoints({ name: 'sleepy', namespace: 'openfaas-fn' })).length).toBe(0); // not woken
    const crash = await eventually(async () => {
      const c = await p.get('/v2/models/crashy/ready');
      return c.status === 400 ? ((await c.json()) as { error: string }) : undefined;
    }, 20_000);
    expect(crash?.error).toMatch(/crashy is not ready/);
    expect((await p.get('/v2/models/ghost/ready')).status).toBe(404);
  }, 30_000);

  it('an infer for a function scaled to zero wakes it, as /function/ does', async () => {
    const res = await p.json('POST', '/v2/models/sleepy/infer', INFER);
    expect(res.status).toBe(200);
    expect(((await res.json()) as Echo).path).toBe('/v2/models/sleepy/infer');
  }, 40_000);
});
