/**
 * Redis goes away under a running gateway: every request that needs the store gets a 503 JSON
 * with Retry-After within a few seconds, /healthz says Redis is down, nothing refused during the
 * outage runs after Redis is back, and the gateway recovers by itself.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EmbeddedRedis, startEmbeddedRedis } from '../../gateway/lib/redis-server';
import { callbackServer } from '../helpers/callback-server';
import { aFunction } from '../helpers/fixtures';
import { seedEchoHttp } from '../helpers/images';
import { eventually, testGateway } from '../helpers/platform';

/** A 503 must arrive within this (a mechanism bound: command timeout 2 s, plus a busy machine). */
const PROMPT_MS = 8000;

async function timed(f: () => Promise<Response>): Promise<{ res: Response; ms: number; body: string }> {
  const t0 = Date.now();
  const res = await f();
  const body = await res.text();
  return { res, ms: Date.now() - t0, body };
}

function expectUnavailable(r: { res: Response; ms: number; body: string }): void {
  expect(r.res.status).toBe(503);
  expect(r.ms).toBeLessThan(PROMPT_MS);
  expect(r.res.headers.get('retry-after')).toBeTruthy();
  const j = JSON.parse(r.body) as { error: { code: string; message: string } };
  expect(j.error.code).toBe('unavailable');
  expect(j.error.message).toMatch(/^redis unavailable/);
}

it('fails fast with 503 while Redis is down, replays nothing refused, and recovers when it is back', async () => {
  const redisDir = mkdtempSync(join(tmpdir(), 'mlfaas-outage-'));
  let redis: EmbeddedRedis = await startEmbeddedRedis({ dir: redisDir });
  const p = await testGateway(redis.url);
  const cb = await callbackServer();
  try {
    seedEchoHttp(p.images);
    expect((await p.json('POST', '/system/functions', aFunction('echo').minScale(1).build())).status).toBe(202);
    expect(await eventually(async () => (await p.get('/function/echo', { method: 'POST', body: 'x' })).status === 200, 30000, 200)).toBe(true);
    expect((await p.get('/healthz')).status).toBe(200);
    // a job running when Redis goes away finishes during the outage, past its lock (2 s here)
    const running = await p.get('/async-function/echo?sleep=1500',
      { method: 'POST', body: 'running', headers: { 'X-Callback-Url': cb.url, 'X-Call-Id': 'running-at-outage' } });
    expect(running.status).toBe(202);
    await new Promise((r) => setTimeout(r, 300));

    await redis.stop();
    const downAt = Date.now();

    const health = await timed(() => p.get('/healthz'));
    expect(health.res.status).toBe(503);
    expect(health.ms).toBeLessThan(PROMPT_MS);
    expect(JSON.parse(health.body)).toEqual(expect.objectContaining({ redis: 'down' }));
    expectUnavailable(await timed(() => p.get('/system/functions')));
    expectUnavailable(await timed(() => p.get('/system/function/echo')));
    expectUnavailable(await timed(() => p.get('/function/never-deployed', { method: 'POST', body: 'x' })));
    // writes refused now must not happen when Redis returns
    expectUnavailable(await timed(() => p.json('POST', '/system/functions', aFunction('late').minScale(0).build())));
    const refused = await timed(() =>
      p.get('/async-function/echo', { method: 'POST', body: 'refused', headers: { 'X-Callback-Url': cb.url, 'X-Call-Id': 'refused-during-outage' } }),
    );
    expectUnavailable(refused);
    await new Promise((r) => setTimeout(r, Math.max(0, 3500 - (Date.now() - downAt))));

    redis = await startEmbeddedRedis({ dir: redisDir }); // same socket, same AOF
    expect(await eventually(async () => (await p.get('/healthz')).status === 200, 20000, 100)).toBe(true);
    const list = await p.get('/system/functions');
    expect(list.status).toBe(200);
    expect(((await list.json()) as Array<{ name: string }>).map((f) => f.name)).toEqual(['echo']);
    // the async path works again end to end: its callback arrives...
    const ok = await p.get('/async-function/echo', { method: 'POST', body: 'after', headers: { 'X-Callback-Url': cb.url, 'X-Call-Id': 'after-outage' } });
    expect(ok.status).toBe(202);
    expect(await eventually(() => cb.received.some((c) => c.headers['x-call-id'] === 'after-outage'), 45000, 100)).toBe(true);
    // ...and the refused one never runs, even given time
    await new Promise((r) => setTimeout(r, 2000));
    expect(cb.received.filter((c) => c.headers['x-call-id'] === 'refused-during-outage')).toEqual([]);
    // the job that was running: its callback arrives once, not again when it comes back stalled
    expect(await eventually(() => cb.received.some((c) => c.headers['x-call-id'] === 'running-at-outage'), 30000, 100)).toBe(true);
    await new Promise((r) => setTimeout(r, 5000)); // > the stalled-job check (the lock, 2 s)
    expect(cb.received.filter((c) => c.headers['x-call-id'] === 'running-at-outage')).toHaveLength(1);
    expect((await p.get('/system/function/late')).status).toBe(404);
  } finally {
    await cb.close();
    await p.stop();
    await redis.stop();
    rmSync(redisDir, { recursive: true, force: true });
  }
}, 150000);
