import { aFunction } from '../helpers/fixtures';
import { seedEchoHttp } from '../helpers/images';
import { eventually, testGateway, testRedis, TestPlatform } from '../helpers/platform';
import { readSeconds } from '../../gateway/metrics/second-window';

type Echo = { replica: string; method: string; path: string; query: string; body: string; callId: string };

describe('invocation proxy (real redis, real replicas)', () => {
  let redis: Awaited<ReturnType<typeof testRedis>>;
  let p: TestPlatform;
  const ready = (name: string, n: number) =>
    eventually(async () => (await p.gw.provider.endpoints({ name, namespace: 'openfaas-fn' })).filter((r) => r.state === 'ready').length === n, 20000);
  const deploy = async (b: ReturnType<typeof aFunction>) => {
    const res = await p.json('POST', '/system/functions', b.build());
    expect(res.status).toBe(202);
  };

  beforeAll(async () => {
    redis = await testRedis();
    p = await testGateway(redis.url, { MLFAAS_UPSTREAM_TIMEOUT_MS: '1500', MLFAAS_MAX_BODY_BYTES: '65536', MLFAAS_QUEUE_DEPTH: '2' });
    seedEchoHttp(p.images);
    await deploy(aFunction('echo').minScale(2));
    expect(await ready('echo', 2)).toBe(true);
  });
  afterAll(async () => {
    await p?.stop();
    await redis?.stop();
  });

  it('passes method, path, query and body through and sets the OpenFaaS headers', async () => {
    const res = await p.get('/function/echo.openfaas-fn/predict/v1?x=1&y=2', { method: 'PUT', body: 'payload', headers: { 'x-call-id': 'call-42' } });
    expect(res.status).toBe(200);
    const body = (await res.json()) as Echo;
    expect(body).toEqual(expect.objectContaining({ method: 'PUT', path: '/predict/v1', query: '?x=1&y=2', body: 'payload', callId: 'call-42' }));
    expect(res.headers.get('x-call-id')).toBe('call-42');
    expect(Number(res.headers.get('x-start-time'))).toBeGreaterThan(1e18);
    expect(Number(res.headers.get('x-duration-seconds'))).toBeGreaterThan(0);
  });

  it('balances concurrent requests by least outstanding', async () => {
    const res = await Promise.all(Array.from({ length: 20 }, () => p.get('/function/echo?sleep=300').then((r) => r.json() as Promise<Echo>)));
    const counts = Object.values(res.reduce<Record<string, number>>((m, e) => ({ ...m, [e.replica]: (m[e.replica] ?? 0) + 1 }), {}));
    expect(counts.sort()).toEqual([10, 10]);
  });

  it('follows load-balancer weights', async () => {
    const eps = await p.gw.provider.endpoints({ name: 'echo', namespace: 'openfaas-fn' });
    await p.gw.provider.setWeight({ name: 'echo', namespace: 'openfaas-fn' }, eps[0].id, 3);
    await eventually(() => [...p.gw.router.all()].some((s) => s.upstreams.some((u) => u.weight === 3)));
    const res = await Promise.all(Array.from({ length: 40 }, () => p.get('/function/echo?sleep=300').then((r) => r.json() as Promise<Echo>)));
    const heavy = res.filter((e) => e.replica === eps[0].id).length;
    expect(heavy).toBe(30);
    await p.gw.provider.setWeight({ name: 'echo', namespace: 'openfaas-fn' }, eps[0].id, 1);
  });

  it('queues past max_inflight and drops the tail with 429 + Retry-After', async () => {
    await deploy(aFunction('narrow').minScale(1).maxInflight(1));
    expect(await ready('narrow', 1)).toBe(true);
    const res = await Promise.all(Array.from({ length: 6 }, () => p.get('/function/narrow?sleep=300')));
    const codes = res.map((r) => r.status).sort();
    expect(codes).toEqual([200, 200, 200, 429, 429, 429]);
    const rejected = res.find((r) => r.status === 429)!;
    expect(rejected.headers.get('retry-after')).toBe('1');
    expect(((await rejected.json()) as { error: { code: string } }).error.code).toBe('queue_full');
  });

  it('scales a function from zero and holds the request until a replica is ready', async () => {
    await deploy(aFunction('cold').minScale(0));
    expect((await p.gw.provider.get({ name: 'cold', namespace: 'openfaas-fn' }))!.replicas).toBe(0);
    const res = await p.get('/function/cold', { method: 'POST', body: 'wake' });
    expect(res.status).toBe(200);
    expect(((await res.json()) as Echo).body).toBe('wake');
    expect((await p.gw.provider.get({ name: 'cold', namespace: 'openfaas-fn' }))!.replicas).toBe(1);
  });

  it('answers 504 when a replica is slower than the upstream timeout', async () => {
    const res = await p.get('/function/echo?sleep=3000');
    expect(res.status).toBe(504);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('upstream_timeout');
  });

  it('answers 413 for an oversized body and 404 for an unknown function', async () => {
    const big = await p.get('/function/echo', { method: 'POST', body: 'x'.repeat(70_000) });
    expect(big.status).toBe(413);
    const missing = await p.get('/function/nope');
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { error: { message: string } }).error.message).toMatch(/nope/);
  });

  it('restarts a crashed replica with backoff', async () => {
    await deploy(aFunction('fragile').minScale(1));
    expect(await ready('fragile', 1)).toBe(true);
    const crashed = await p.get('/function/fragile?exit=1');
    expect(crashed.status).toBe(502);
    const back = await eventually(async () => {
      const [r] = await p.gw.provider.endpoints({ name: 'fragile', namespace: 'openfaas-fn' });
      return r && r.state === 'ready' && r.restarts >= 1;
    }, 20000);
    expect(back).toBe(true);
    expect((await eventually(async () => (await p.get('/function/fragile')).status === 200)) as boolean).toBe(true);
  });

  it('drains in-flight requests before stopping a replica on scale-down', async () => {
    await deploy(aFunction('drain').minScale(1));
    expect(await ready('drain', 1)).toBe(true);
    const slow = p.get('/function/drain?sleep=1000');
    await new Promise((r) => setTimeout(r, 150));
    expect((await p.json('POST', '/system/scale-function/drain', { replicas: 0 })).status).toBe(400); // min_scale 1
    await p.gw.provider.scale({ name: 'drain', namespace: 'openfaas-fn' }, 0);
    expect((await slow).status).toBe(200);
    expect(await eventually(async () => (await p.gw.provider.endpoints({ name: 'drain', namespace: 'openfaas-fn' })).length === 0)).toBe(true);
  });

  it('frees the replica slot when the client disconnects mid-response', async () => {
    for (let i = 0; i < 3; i++) {
      const ac = new AbortController();
      // a 300 kB answer: larger than the socket buffers, so the pipe would stall on a dead client
      const r = p.get('/function/echo?sleep=200&pad=300000', { method: 'POST', body: 'x', signal: ac.signal }).catch(() => undefined);
      setTimeout(() => ac.abort(), 50);
      await r;
    }
    const state = () => [...p.gw.router.all()].find((s) => s.ref.name === 'echo')!;
    expect(await eventually(() => state().inflight === 0 && state().upstreams.every((u) => u.outstanding === 0), 10000)).toBe(true);
  });

  it('exports Prometheus metrics and per-second counters in Redis', async () => {
    for (let i = 0; i < 3; i++) expect((await p.get('/function/echo')).status).toBe(200);
    const text = await (await p.get('/metrics')).text();
    expect(text).toMatch(/gateway_function_invocation_total\{function_name="echo\.openfaas-fn",code="200"\} \d+/);
    expect(text).toMatch(/gateway_functions_seconds_bucket\{le="0\.005",function_name="echo\.openfaas-fn",code="200"\}/);
    expect(text).toMatch(/gateway_service_count\{function_name="echo\.openfaas-fn"\} 2/);
    expect(text).toMatch(/mlfaas_function_queue_length\{function_name="narrow\.openfaas-fn"\} 0/);
    const now = Math.floor(Date.now() / 1000);
    const secs = await eventually(async () => {
      const m = await readSeconds(p.gw.redis, { name: 'echo', namespace: 'openfaas-fn' }, now - 120, now + 2);
      return [...m.values()].reduce((s, c) => s + c.completions, 0) >= 3 ? m : undefined;
    }, 5000);
    expect(secs).toBeDefined();
    const perReplica = [...secs!.values()].reduce((sum, c) => sum + Object.values(c.perReplica).reduce((a, b) => a + b, 0), 0);
    const completions = [...secs!.values()].reduce((sum, c) => sum + c.completions, 0);
    // gateway-side failures (413, 429, 504 …) complete without reaching a replica
    expect(perReplica).toBeGreaterThan(0);
    expect(perReplica).toBeLessThanOrEqual(completions);
    const list = (await (await p.get('/system/functions')).json()) as Array<{ name: string; invocationCount: number }>;
    expect(list.find((f) => f.name === 'echo')!.invocationCount).toBeGreaterThanOrEqual(3);
  });
});
