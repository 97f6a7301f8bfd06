/**
 * The distributed mode on one machine, for real: two `mlfaas gateway` processes and one
 * `mlfaas autoscaler` process against one Redis. A function is deployed through one gateway and
 * invoked through the other; the autoscaler, scaling it under load, is killed (SIGKILL) and
 * restarted, and the new process takes over from Redis: the replicas it set stay, the scaling
 * events before the kill are kept, and it goes on deciding.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectRedis } from '../../gateway/lib/redis-server';
import { ImageStore } from '../../gateway/providers/local/image-store';
import { type CapabilityProfile, profileKey } from '../../node-runtime/profiler';
import { aFunction } from '../helpers/fixtures';
import { gatewayProcess } from '../helpers/gateway-process';
import { seedEchoHttp } from '../helpers/images';
import { eventually, TEST_ENV, testRedis } from '../helpers/platform';

const BIN = join(__dirname, '../../bin/mlfaas');

type Event = { time: string; policy: string; action: string; to?: number };

describe('distributed mode: two gateway processes and an autoscaler process on one Redis', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mlfaas-dist-'));
  let redis: Awaited<ReturnType<typeof testRedis>>;
  let a: Awaited<ReturnType<typeof gatewayProcess>>;
  let b: Awaited<ReturnType<typeof gatewayProcess>>;
  let scaler: ChildProcess | undefined;
  let load = true;
  const env = () =>
    ({ MLFAAS_REDIS_URL: redis.url, MLFAAS_DATA_DIR: dir, MLFAAS_BASIC_AUTH: 'false', MLFAAS_AUTOSCALER: 'false', MLFAAS_ISOLATION: 'off',
      MLFAAS_MANUAL_SCALE_HOLD_S: '2' });
  let scalerLog = '';
  const startScaler = () => {
    const c = spawn(process.execPath, [BIN, 'autoscaler', '--redis-url', redis.url],
      { env: { ...process.env, ...TEST_ENV, ...env(), MLFAAS_AUTOSCALER_INTERVAL_MS: '500' }, stdio: ['ignore', 'pipe', 'pipe'] });
    c.stdout!.on('data', (b: Buffer) => (scalerLog += b.toString()));
    c.stderr!.on('data', (b: Buffer) => (scalerLog += b.toString()));
    return c;
  };
  const events = async (): Promise<Event[]> => (await (await fetch(`${a.url}/system/scaling-events?function=fn`)).json()) as Event[];
  const replicas = async () => ((await (await fetch(`${b.url}/system/function/fn`)).json()) as { replicas: number }).replicas;

  beforeAll(async () => {
    redis = await testRedis();
    seedEchoHttp(new ImageStore(join(dir, 'images')));
    a = await gatewayProcess(env());
    b = await gatewayProcess({ ...env(), MLFAAS_AGENT: 'false' });
  });
  afterAll(async () => {
    load = false;
    scaler?.kill('SIGKILL');
    for (const g of [b, a]) {
      if (!g) continue;
      g.child.kill('SIGTERM');
      await new Promise((r) => (g.child.exitCode !== null ? r(undefined) : g.child.once('exit', r)));
    }
    await redis?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('deploys through one gateway and invokes through the other', async () => {
    const body = aFunction('fn').minScale(1).maxScale(12).slo(300).build();
    expect((await fetch(`${a.url}/system/functions`, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' } })).status)
      .toBe(202);
    const r = await eventually(async () => {
      const x = await fetch(`${b.url}/function/fn`, { method: 'POST', body: 'via-b' });
      return x.status === 200 ? ((await x.json()) as { body: string }) : undefined;
    }, 30000);
    expect(r?.body).toBe('via-b');
    // the capability profile the agent would measure (its format and key), seeded with known numbers:
    // 100 ms a request, 10 req/s a replica at quota 1 (the autoscaler holds a function without one)
    const seeded: CapabilityProfile = {
      function: 'fn.openfaas-fn',
      version: 'seeded-by-test',
      measuredAt: new Date().toISOString(),
      device: 'cpu',
      points: [1, 0.5, 0.25].map((quota) => ({ batch: 1, quota, smShare: 1, throughput: 10 * quota, latencyMs: 100 / quota })),
    };
    const r2 = connectRedis(redis.url);
    await r2.set(profileKey({ name: 'fn', namespace: 'openfaas-fn' }), JSON.stringify(seeded));
    r2.disconnect();
  });

  it('keeps the autoscaler\'s work across a SIGKILL and a restart', async () => {
    // 4 clients of 100 ms requests: about 40 req/s against 10 a replica (within the 300 ms SLO)
    const client = async () => {
      while (load) await fetch(`${b.url}/function/fn?sleep=100`, { method: 'POST', body: 'x' }).then((r) => r.arrayBuffer()).catch(() => undefined);
    };
    const clients = Array.from({ length: 4 }, client);
    scaler = startScaler();
    expect(await eventually(async () => (await replicas()) >= 2, 60000, 250)).toBe(true);
    const before = await events();
    expect(before.some((e) => e.policy !== 'manual' && e.action === 'replicas')).toBe(true);
    scaler.kill('SIGKILL');
    await new Promise((r) => scaler!.once('exit', r));
    const scaled = await replicas();
    // nobody decides while it is down: the count it set stays
    await new Promise((r) => setTimeout(r, 1000));
    expect(await replicas()).toBe(scaled);
    expect(scaled).toBeGreaterThan(1);
    // while it is down, someone scales the function to 1 by hand (held 2 s): the load still needs more
    expect((await fetch(`${b.url}/system/scale-function/fn`,
      { method: 'POST', body: JSON.stringify({ serviceName: 'fn', replicas: 1 }), headers: { 'content-type': 'application/json' } })).status).toBe(202);
    const restartedAt = new Date().toISOString();
    scaler = startScaler();
    // the new process waits out the dead one's Redis lease (5 s), then decides from Redis's state
    const after = await eventually(async () => {
      const now = await events();
      return now.some((e) => e.time > restartedAt && e.policy !== 'manual' && e.action === 'replicas' && (e.to ?? 0) > 1) ? now : undefined;
    }, 60000, 250);
    // on failure: what it did
    expect({ after: !!after, events: after ? [] : (await events()).slice(0, 5), log: after ? '' : scalerLog.slice(-2000) })
      .toEqual({ after: true, events: [], log: '' });
    expect(await replicas()).toBeGreaterThan(1);
    // the events from before the kill are all still there
    expect(after!.map((e) => e.time)).toEqual(expect.arrayContaining(before.map((e) => e.time)));
    load = false;
    await Promise.all(clients);
  }, 150_000);
});
