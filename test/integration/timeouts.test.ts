/**
 * Per-function timeouts in the gateway (issue 25): a function's `exec_timeout` (else
 * `write_timeout`) + 500 ms grace bounds each invocation instead of MLFAAS_UPSTREAM_TIMEOUT_MS
 * (60 s here), `read_timeout` bounds receiving the request body; both are counted. Real gateway,
 * real Redis, real replicas. Mechanisms, not timings: the 504's message names the bound used.
 */
import { connect } from 'node:net';
import { aFunction } from '../helpers/fixtures';
import { seedEchoHttp } from '../helpers/images';
import { eventually, testGateway, testRedis, TestPlatform } from '../helpers/platform';

describe('per-function timeouts (real redis, real replicas)', () => {
  let redis: Awaited<ReturnType<typeof testRedis>>;
  let p: TestPlatform;
  const ready = (name: string) =>
    eventually(async () => (await p.gw.provider.endpoints({ name, namespace: 'openfaas-fn' })).some((r) => r.state === 'ready'), 20000);
  const metric = async (re: RegExp) => {
    const m = (await (await p.get('/metrics')).text()).match(re);
    return m ? Number(m[1]) : 0;
  };

  beforeAll(async () => {
    redis = await testRedis();
    p = await testGateway(redis.url, { MLFAAS_UPSTREAM_TIMEOUT_MS: '60000' });
    seedEchoHttp(p.images);
    const fns = [
      aFunction('exec').env('exec_timeout', '300ms').env('write_timeout', '30s'),
      aFunction('write').env('write_timeout', '0.4s'),
      aFunction('plain'),
      aFunction('reader').env('read_timeout', '1s'),
    ];
    for (const b of fns) expect((await p.json('POST', '/system/functions', b.minScale(1).build())).status).toBe(202);
    for (const f of ['exec', 'write', 'plain', 'reader']) expect(await ready(f)).toBe(true);
  }, 60_000);
  afterAll(async () => {
    await p?.stop();
    await redis?.stop();
  });

  it('exec_timeout + grace bounds the invocation: 504 naming 800 ms, counted', async () => {
    const res = await p.get('/function/exec?sleep=5000', { method: 'POST', body: 'x' });
    expect(res.status).toBe(504);
    expect(await res.json()).toEqual({ error: { code: 'upstream_timeout', message: 'function did not answer within 800 ms' } });
    expect(await metric(/mlfaas_function_timeouts_total\{function_name="exec.openfaas-fn",phase="exec"\} (\d+)/)).toBe(1);
    expect(await metric(/gateway_function_invocation_total\{function_name="exec.openfaas-fn",code="504"\} (\d+)/)).toBe(1);
    const fast = await p.get('/function/exec', { method: 'POST', body: 'x' });
    expect(fast.status).toBe(200);
  }, 20_000);

  it('write_timeout + grace where exec_timeout is not set; the same bound on /v2, in the protocol\'s form', async () => {
    const res = await p.get('/function/write?sleep=5000', { method: 'POST', body: 'x' });
    expect([res.status, ((await res.json()) as { error: { message: string } }).error.message]).toEqual([504, 'function did not answer within 900 ms']);
    const v2 = await p.json('POST', '/v2/models/write/infer?sleep=5000', { inputs: [{ name: 'x', datatype: 'FP32', shape: [1], data: [1] }] });
    expect([v2.status, await v2.json()]).toEqual([504, { error: 'function did not answer within 900 ms', code: 'upstream_timeout' }]);
    expect(await metric(/mlfaas_function_timeouts_total\{function_name="write.openfaas-fn",phase="exec"\} (\d+)/)).toBe(2);
  }, 20_000);

  it('a function without timeouts keeps the global bound (a 1.2 s answer is served)', async () => {
    const res = await p.get('/function/plain?sleep=1200', { method: 'POST', body: 'x' });
    expect(res.status).toBe(200);
  }, 20_000);

  it('read_timeout: a body that stops arriving is a 408 naming body, counted; the function is not called', async () => {
    const url = new URL(p.gw.url);
    const answer = await new Promise<string>((resolve, reject) => {
      const sock = connect(Number(url.port), url.hostname, () => {
        sock.write('POST /function/reader HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: 100\r\n\r\nonly-some');
      });
      let got = '';
      sock.on('data', (b) => (got += b.toString()));
      sock.on('end', () => resolve(got));
      sock.on('error', reject);
      setTimeout(() => {
        sock.destroy();
        resolve(got);
      }, 10_000);
    });
    expect(answer).toMatch(/^HTTP\/1.1 408/);
    expect(answer).toMatch(/\r\nconnection: close\r\n/i);
    expect(answer).toMatch(/"code":"request_timeout"/);
    expect(answer).toMatch(/"field":"body"/);
    expect(await metric(/mlfaas_function_timeouts_total\{function_name="reader.openfaas-fn",phase="read"\} (\d+)/)).toBe(1);
    expect((await p.get('/function/reader', { method: 'POST', body: 'all at once' })).status).toBe(200);
    // the replica answered once (the whole request); the cut one got the gateway's 408 only
    expect(await metric(/gateway_function_invocation_total\{function_name="reader.openfaas-fn",code="200"\} (\d+)/)).toBe(1);
    expect(await metric(/gateway_function_invocation_total\{function_name="reader.openfaas-fn",code="408"\} (\d+)/)).toBe(1);
  }, 20_000);
});
