/**
 * Issue 21 item 13: a replica killed under load. A request whose connection is refused (the
 * replica is gone, the agent has not told the gateway yet) never reached it, so the gateway
 * sends it to a healthy replica instead of answering 502; so does an idempotent request whose
 * connection broke under it, and (this function is an inference one: a prediction run twice changes
 * nothing) a POST whose connection broke before an answer. A caller may still get a 502 when the
 * gateway already knows only one replica is left (no other to send it to), never for a refused
 * connection.
 */
import { aFunction } from '../helpers/fixtures';
import { seedEchoHttp } from '../helpers/images';
import { eventually, testGateway, testRedis, TestPlatform } from '../helpers/platform';

const ref = { name: 'pair', namespace: 'openfaas-fn' };

describe('a replica killed under load', () => {
  let redis: Awaited<ReturnType<typeof testRedis>>;
  let p: TestPlatform;
  beforeAll(async () => {
    redis = await testRedis();
    // a slow restart: the dead replica stays dead for the whole test
    p = await testGateway(redis.url, { MLFAAS_AUTOSCALER: 'false' });
    seedEchoHttp(p.images);
    expect((await p.json('POST', '/system/functions', aFunction('pair').image('test/echo-http:1').minScale(2).build())).status).toBe(202);
    expect(await eventually(async () => (await p.gw.provider.endpoints(ref)).filter((e) => e.state === 'ready').length === 2, 30000, 100)).toBe(true);
  }, 60000);
  afterAll(async () => {
    await p?.stop();
    await redis?.stop();
  });

  const load = async (method: string) => {
    const [victim] = (await p.gw.provider.endpoints(ref)).filter((e) => e.state === 'ready');
    const failures: string[] = [];
    let sent = 0;
    let done = 0;
    const worker = async () => {
      while (sent < 250) {
        sent++;
        if (sent === 40) process.kill(victim.pid!, 'SIGKILL');
        const res = await fetch(`${p.gw.url}/function/pair?n=${sent}`, { method, ...(method === 'POST' ? { body: String(sent) } : {}) });
        const text = await res.text();
        if (res.status !== 200) failures.push(`${res.status} ${text}`);
        done++;
      }
    };
    await Promise.all(Array.from({ length: 8 }, worker));
    expect(done).toBe(250);
    // the agent restarts the killed replica; the next round starts with two ready ones
    expect(await eventually(async () => (await p.gw.provider.endpoints(ref)).filter((e) => e.state === 'ready').length === 2, 30000, 100)).toBe(true);
    return failures;
  };

  it('idempotent requests: every caller gets 200', async () => {
    expect(await load('GET')).toEqual([]);
  }, 60000);

  it('POST: a refused connection is never a caller\'s 502 (only a request in flight on the dying replica may be)', async () => {
    const failures = await load('POST');
    expect(failures.filter((f) => /ECONNREFUSED|ENOENT/.test(f))).toEqual([]);
    expect(failures.length).toBeLessThanOrEqual(8); // at most one in flight per concurrent caller
  }, 60000);
});
