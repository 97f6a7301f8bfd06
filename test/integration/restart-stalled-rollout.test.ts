/**
 * Issue 21 item 10: an update to a version that never gets ready stalls with the old version
 * serving; a restart of the platform (agent and gateway) in that state must keep the old version
 * serving, as a Deployment's old ReplicaSet survives a restart of its controller. Then, once the
 * update is fixed and completes, a restart starts the new version only.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { aFunction } from '../helpers/fixtures';
import { seedEchoHttp, seedImage } from '../helpers/images';
import { eventually, testGateway, testRedis, TestPlatform } from '../helpers/platform';

const CRASHER = "console.error('boom: this version cannot start'); process.exit(2);";
const ref = { name: 'steady', namespace: 'openfaas-fn' };

describe('a restart during a stalled rolling update', () => {
  let redis: Awaited<ReturnType<typeof testRedis>>;
  const dataDir = mkdtempSync(join(tmpdir(), 'mlfaas-data-'));
  let p: TestPlatform | undefined;
  const start = async () => {
    p = await testGateway(redis.url, {}, dataDir);
    seedEchoHttp(p.images);
    seedImage(p.images, 'test/crasher:1', { 'server.js': CRASHER },
      { language: 'node', kind: 'inference', mode: 'http', fprocess: 'node server.js', readiness: '/_/ready' });
    return p;
  };
  const call = async () => {
    const res = await fetch(`${p!.gw.url}/function/steady`, { method: 'POST', body: 'x' });
    return { status: res.status, body: (await res.json()) as { env?: string | null; error?: unknown } };
  };
  const served = (env: string) => eventually(async () => {
    const r = await call().catch(() => undefined);
    return r?.status === 200 && r.body.env === env;
  }, 60000, 200);

  beforeAll(async () => {
    redis = await testRedis();
  });
  afterAll(async () => {
    await p?.stop();
    await redis?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('keeps the old version serving across the restart, and forgets it once an update completes', async () => {
    await start();
    const v1 = aFunction('steady').image('test/echo-http:1').env('GREETING', 'v1').minScale(1).build();
    expect((await p!.json('POST', '/system/functions', v1)).status).toBe(202);
    expect(await served('v1')).toBe(true);

    // the update to a version that crash-loops stalls: v1 keeps serving
    const bad = aFunction('steady').image('test/crasher:1').env('GREETING', 'v2').minScale(1).build();
    expect((await p!.json('PUT', '/system/functions', bad)).status).toBe(202);
    const stalled = await eventually(async () => /rolling update stalled/.test(await (await p!.get('/system/logs?name=steady&tail=50')).text()), 30000, 200);
    expect(stalled).toBe(true);
    expect((await call()).body.env).toBe('v1');

    // a restart in that state (the agent's replicas die with it)
    await p!.stop();
    p = undefined;
    await start();
    expect(await served('v1')).toBe(true);
    // and it stays that way: the new version is still tried beside it, and still fails
    for (let i = 0; i < 10; i++) {
      expect((await call()).body.env).toBe('v1');
      await new Promise((r) => setTimeout(r, 200));
    }
    const eps = await p!.gw.provider.endpoints(ref);
    expect(eps.some((e) => e.state === 'ready')).toBe(true);

    // the update fixed: it completes, and a later restart starts the new version only
    const v3 = aFunction('steady').image('test/echo-http:1').env('GREETING', 'v3').minScale(1).build();
    expect((await p!.json('PUT', '/system/functions', v3)).status).toBe(202);
    expect(await served('v3')).toBe(true);
    expect(await eventually(async () => (await p!.gw.provider.endpoints(ref)).length === 1, 30000, 200)).toBe(true);
    await new Promise((r) => setTimeout(r, 2500)); // a reconcile records the completed update
    await p!.stop();
    p = undefined;
    await start();
    expect(await served('v3')).toBe(true);
    const logs = await (await p!.get('/system/logs?name=steady&tail=100')).text();
    expect(logs.split('\n').filter((l) => /had not completed/.test(l)).length).toBe(1); // the first restart only
  }, 180000);
});
