/**
 * Async invocations retry the function's own retry codes with back-off, as OpenFaaS Pro's
 * queue-worker does (issue 25): a real function answering 503 then 200, a real Redis (BullMQ keeps
 * the job in its delayed set between tries), a real callback receiver.
 */
import { asyncBackoffMs } from '../../gateway/async/async-invocations';
import { FunctionRetry } from '../../gateway/async/function-retry';
import { callbackServer } from '../helpers/callback-server';
import { aFunction } from '../helpers/fixtures';
import { seedImage } from '../helpers/images';
import { eventually, testGateway, testRedis, TestPlatform } from '../helpers/platform';

/** Answers FAIL_STATUS (with Retry-After when RETRY_AFTER is set) to its first FAILS calls, then 200 with the call number. */
const FLAKY = `
const http = require('http');
let calls = 0;
http.createServer((req, res) => {
  if (req.url === '/_/ready' || req.url === '/_/health') return res.writeHead(200).end('ok');
  req.resume();
  req.on('end', () => {
    calls++;
    const fails = Number(process.env.FAILS || 0);
    if (calls <= fails) {
      const h = { 'content-type': 'text/plain' };
      if (process.env.RETRY_AFTER) h['retry-after'] = process.env.RETRY_AFTER;
      return res.writeHead(Number(process.env.FAIL_STATUS || 503), h).end('busy ' + calls);
    }
    res.writeHead(200, { 'content-type': 'text/plain' }).end('ok after ' + calls);
  });
}).listen(Number(process.env.PORT), process.env.HOST || '127.0.0.1');
`;

describe('async retries of the function\'s own status codes (real redis, real replicas)', () => {
  let redis: Awaited<ReturnType<typeof testRedis>>;
  let p: TestPlatform;
  let cb: Awaited<ReturnType<typeof callbackServer>>;
  const deploy = async (name: string, env: Record<string, string>, ann: Record<string, string>) => {
    let b = aFunction(name).image('test/flaky:1').minScale(1);
    for (const [k, v] of Object.entries(env)) b = b.env(k, v);
    for (const [k, v] of Object.entries(ann)) b = b.annotation(k, v);
    expect((await p.json('POST', '/system/functions', b.build())).status).toBe(202);
    const up = async () => (await p.gw.provider.endpoints({ name, namespace: 'openfaas-fn' })).some((r) => r.state === 'ready');
    expect(await eventually(up, 20000)).toBe(true);
  };
  const submit = async (name: string, callId: string) => {
    const r = await p.get(`/async-function/${name}`, { method: 'POST', body: 'job', headers: { 'X-Callback-Url': cb.url, 'X-Call-Id': callId } });
    expect(r.status).toBe(202);
  };
  const callbacksOf = (id: string) => cb.received.filter((c) => c.headers['x-call-id'] === id);
  const retries = async (fn: string, code: number) => {
    const re = new RegExp(`mlfaas_async_retries_total\\{function_name="${fn}.openfaas-fn",code="${code}"\\} (\\d+)`);
    const m = (await (await p.get('/metrics')).text()).match(re);
    return m ? Number(m[1]) : 0;
  };

  beforeAll(async () => {
    redis = await testRedis();
    p = await testGateway(redis.url);
    cb = await callbackServer();
    seedImage(p.images, 'test/flaky:1', { 'server.js': FLAKY }, { language: 'node', kind: 'inference', mode: 'http', fprocess: 'node server.js' });
  });
  afterAll(async () => {
    await cb?.close();
    await p?.stop();
    await redis?.stop();
  });

  it('503, 503, then 200: the job is retried and the callback gets the 200 once', async () => {
    await deploy('flaky', { FAILS: '2' }, { 'com.openfaas.retry.attempts': '4', 'com.openfaas.retry.min_wait': '100ms', 'com.openfaas.retry.max_wait': '1s' });
    await submit('flaky', 'retried');
    expect(await eventually(() => callbacksOf('retried').length === 1, 30_000)).toBe(true);
    const [got] = callbacksOf('retried');
    expect([got.headers['x-function-status'], got.body.toString()]).toEqual(['200', 'ok after 3']);
    expect(await retries('flaky', 503)).toBe(2);
    await new Promise((r) => setTimeout(r, 500));
    expect(callbacksOf('retried')).toHaveLength(1);
  }, 40_000);

  it('attempts exhausted: the callback gets the last answer (the function\'s 503)', async () => {
    await deploy('always', { FAILS: '1000' },
      { 'com.openfaas.retry.attempts': '3', 'com.openfaas.retry.min_wait': '50ms', 'com.openfaas.retry.max_wait': '200ms' });
    await submit('always', 'exhausted');
    expect(await eventually(() => callbacksOf('exhausted').length === 1, 30_000)).toBe(true);
    const [got] = callbacksOf('exhausted');
    expect([got.headers['x-function-status'], got.body.toString()]).toEqual(['503', 'busy 3']);
    expect(await retries('always', 503)).toBe(2);
  }, 40_000);

  it('between tries the job waits in Redis (BullMQ\'s delayed set), Retry-After within the bounds', async () => {
    await deploy('later', { FAILS: '1', RETRY_AFTER: '2' }, { 'com.openfaas.retry.attempts': '2', 'com.openfaas.retry.min_wait': '100ms',
      'com.openfaas.retry.max_wait': '5s' });
    await submit('later', 'delayed');
    const waiting = await eventually(async () => (await p.gw.asyncInvocations.queue.getDelayed()).find((j) => j.data.callId === 'delayed'), 20_000);
    expect(waiting?.data.ref.name).toBe('later');
    expect(waiting?.attemptsMade).toBe(1);
    // its delay is the function's Retry-After (2 s), not min_wait (100 ms)
    expect(waiting!.delay).toBe(2000);
    expect(await eventually(() => callbacksOf('delayed').length === 1, 30_000)).toBe(true);
    expect(callbacksOf('delayed')[0].body.toString()).toBe('ok after 2');
  }, 40_000);

  it('a status not in com.openfaas.retry.codes is final at once', async () => {
    await deploy('picky', { FAILS: '1', FAIL_STATUS: '500' }, { 'com.openfaas.retry.codes': '429,503', 'com.openfaas.retry.min_wait': '50ms' });
    await submit('picky', 'final');
    expect(await eventually(() => callbacksOf('final').length === 1, 30_000)).toBe(true);
    expect([callbacksOf('final')[0].headers['x-function-status'], callbacksOf('final')[0].body.toString()]).toEqual(['500', 'busy 1']);
    expect(await retries('picky', 500)).toBe(0);
  }, 40_000);
});

describe('asyncBackoffMs', () => {
  const job = { retry: { codes: [503], minWaitMs: 100, maxWaitMs: 1000 } };
  test.each([
    ['function retry 1', 1, new FunctionRetry(503), job, 100],
    ['function retry 3', 3, new FunctionRetry(503), job, 400],
    ['function retry 9: capped at max_wait', 9, new FunctionRetry(503), job, 1000],
    ['Retry-After 0 s: raised to min_wait', 1, new FunctionRetry(429, 0), job, 100],
    ['Retry-After 0.5 s is not delay-seconds: back-off', 2, new FunctionRetry(429), job, 200],
    ['Retry-After above max_wait', 1, new FunctionRetry(429, 30), job, 1000],
    ['gateway-side failure: 500 ms doubled', 3, new Error('no replicas'), job, 2000],
    ['a job queued before issue 25 (no policy)', 2, new FunctionRetry(503), {}, 1000],
  ])('%s', (_n, retry, err, j, want) => {
    expect(asyncBackoffMs(retry, err, j)).toBe(want);
  });
});
