/**
 * Issue 26 end to end: a real gateway and replica, the live autoscaler (hybrid) deciding over it
 * with a capability profile in Redis (what the agent stores after profiling), and
 * `GET /system/overview` over HTTP returning the forecast that decision published, the mean batch
 * size of the answers' X-Batch-Size, and `GET /system/forecasts` with the history and its 4xx.
 */
import { LiveAutoscaler } from '../../autoscaler/live/live-autoscaler';
import { connectRedis } from '../../gateway/lib/redis-server';
import type { Overview } from '../../gateway/routes/overview-model';
import { Forecasts, type ForecastPoint } from '../../gateway/registry/forecasts';
import { profileKey, type CapabilityProfile } from '../../node-runtime/profiler';
import { aFunction } from '../helpers/fixtures';
import { ECHO_HTTP_SERVER, seedImage } from '../helpers/images';
import { eventually, testGateway, testRedis, TestPlatform } from '../helpers/platform';

jest.setTimeout(180_000);

const PASSWORD = 'forecast-26';
const auth = { authorization: 'Basic ' + Buffer.from(`admin:${PASSWORD}`).toString('base64') };
const ref = { name: 'batchy', namespace: 'openfaas-fn' };

/** The echo server, answering with `X-Batch-Size: ?b=` (1 without). */
const BATCHY = ECHO_HTTP_SERVER.replace(`'x-replica': process.env.MLFAAS_REPLICA_ID }`,
  `'x-replica': process.env.MLFAAS_REPLICA_ID, 'x-batch-size': u.searchParams.get('b') || '1' }`);

function profile(): CapabilityProfile {
  return { function: 'batchy.openfaas-fn', version: 't1', measuredAt: new Date().toISOString(), device: 'cpu',
    points: [1, 0.5, 0.25].map((quota) => ({ batch: 1, quota, smShare: 1, throughput: 500 * quota, latencyMs: 2 / quota })) };
}

describe('a live decision\'s forecast in /system/overview (real gateway, real Redis)', () => {
  let redis: Awaited<ReturnType<typeof testRedis>>;
  let p: TestPlatform;
  let client: ReturnType<typeof connectRedis>;
  const get = async <T>(path: string) => {
    const res = await p.get(path, { headers: auth });
    return { status: res.status, body: (await res.json()) as T };
  };

  beforeAll(async () => {
    redis = await testRedis();
    client = connectRedis(redis.url);
    p = await testGateway(redis.url, { MLFAAS_AUTH_PASSWORD: PASSWORD, MLFAAS_BASIC_AUTH: 'true' });
    expect(BATCHY).toContain('x-batch-size');
    seedImage(p.images, 'test/batchy:1', { 'server.js': BATCHY }, { language: 'node', kind: 'inference', mode: 'http', fprocess: 'node server.js',
      readiness: '/_/ready', health: '/_/health' });
    const res = await p.json('POST', '/system/functions', { ...aFunction('batchy').minScale(1).maxScale(2).slo(500).build(), image: 'test/batchy:1' }, auth);
    expect(res.status).toBe(202);
    const ready = await eventually(async () => (await p.gw.provider.endpoints(ref)).some((r) => r.state === 'ready'), 60_000, 100);
    expect(ready).toBe(true);
  });
  afterAll(async () => {
    client?.disconnect();
    await p?.stop();
    await redis?.stop();
  });

  it('the hybrid\'s decision publishes R and its band; the overview returns the latest, /system/forecasts the history', async () => {
    await client.set(profileKey(ref), JSON.stringify(profile()));
    const a = new LiveAutoscaler(client, p.gw.provider, { policy: 'hybrid', params: {}, intervalMs: 1000, defaultSloMs: 500, devices: ['cpu0'] });
    // two ticks one second apart (the loop's clock is an argument): each decision stores a point
    const t0 = Math.floor(Date.now() / 1000) * 1000;
    const reports = [];
    for (const t of [t0, t0 + 1000]) reports.push((await a.tick(t)).find((r) => r.fn === 'batchy.openfaas-fn'));
    for (const r of reports) expect(r?.forecast).toBeDefined();
    const last = reports[1]!.forecast!;
    expect(last.label).toBe('kalman q0.9');
    expect(last.lo).toBeLessThanOrEqual(last.hi);

    const o = await get<Overview>('/system/overview');
    expect(o.status).toBe(200);
    const f = o.body.functions.find((x) => x.name === 'batchy')!;
    expect(f.forecast).toMatchObject({ at: new Date(t0 + 1000).toISOString(), label: 'kalman q0.9' });
    expect(f.forecast!.rps).toBeCloseTo(last.rps, 3);
    expect(f.forecast!.hi).toBeCloseTo(last.hi, 3);
    // the collector booked the replica on the loop's one device, cpu0: its cpuset
    expect(f.replicaList.map((r) => r.cpuset)).toEqual(['0']);

    const h = await get<ForecastPoint[]>('/system/forecasts?function=batchy');
    expect(h.status).toBe(200);
    expect(h.body.map((x) => x.at)).toEqual([new Date(t0 + 1000).toISOString(), new Date(t0).toISOString()]);
    expect((await get<ForecastPoint[]>('/system/forecasts?function=batchy.openfaas-fn&limit=1')).body).toHaveLength(1);
  });

  it('/system/forecasts refuses bad input with a 4xx naming the field', async () => {
    const bad = await get<unknown>('/system/forecasts?function=batchy&limit=0');
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toContain('limit');
    const none = await get<unknown>('/system/forecasts');
    expect(none.status).toBe(400);
    expect(JSON.stringify(none.body)).toContain('function');
    expect((await get<unknown>('/system/forecasts?function=nope')).status).toBe(404);
    expect((await p.get('/system/forecasts?function=batchy')).status).toBe(401);
  });

  it('batchMean: 8 answers in batches of 4 and 4 in batches of 2 are 12 answers in 4 executions: 3', async () => {
    for (let i = 0; i < 8; i++) expect((await p.get('/function/batchy?b=4')).status).toBe(200);
    for (let i = 0; i < 4; i++) expect((await p.get('/function/batchy?b=2')).status).toBe(200);
    // the counters land once their seconds are flushed and over (bounded wait); a 60 s window holds them all
    const f = await eventually(async () => {
      const fn = (await get<Overview>('/system/overview?window=60')).body.functions.find((x) => x.name === 'batchy');
      return fn && fn.batchMean !== undefined && fn.rps * 60 >= 12 ? fn : undefined;
    }, 20_000, 250);
    expect(f?.batchMean).toBe(3);
  });

  it('deleting the function drops its forecast history (a redeploy starts afresh)', async () => {
    expect((await new Forecasts(client).list(ref)).length).toBeGreaterThan(0);
    const res = await p.json('DELETE', '/system/functions', { functionName: 'batchy' }, auth);
    expect(res.status).toBe(202);
    expect(await new Forecasts(client).list(ref)).toEqual([]);
  });
});
