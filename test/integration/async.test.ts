import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ResolveAll } from '../../gateway/async/callback-delivery';
import type { AsyncOptions } from '../../gateway/async/async-invocations';
import { loadConfig } from '../../gateway/config';
import { ImageStore } from '../../gateway/providers/local/image-store';
import { startPlatformGateway } from '../../cli/compose';
import { callbackServer } from '../helpers/callback-server';
import { aFunction } from '../helpers/fixtures';
import { gatewayProcess } from '../helpers/gateway-process';
import { seedEchoHttp } from '../helpers/images';
import { eventually, TEST_ENV, testGateway, testRedis } from '../helpers/platform';

describe('async invocations', () => {
  it('accepts with 202 and posts the result to X-Callback-Url', async () => {
    const redis = await testRedis();
    const p = await testGateway(redis.url);
    const cb = await callbackServer();
    try {
      seedEchoHttp(p.images);
      expect((await p.json('POST', '/system/functions', aFunction('aecho').minScale(1).build())).status).toBe(202);
      const res = await p.get('/async-function/aecho/path?q=1',
        { method: 'POST', body: 'later', headers: { 'X-Callback-Url': cb.url, 'Content-Type': 'text/plain' } });
      expect(res.status).toBe(202);
      const callId = res.headers.get('x-call-id');
      expect(callId).toBeTruthy();
      expect(await eventually(() => cb.received.length === 1, 20000)).toBe(true);
      const [got] = cb.received;
      expect(got.headers['x-function-status']).toBe('200');
      expect(got.headers['x-function-name']).toBe('aecho');
      expect(got.headers['x-call-id']).toBe(callId);
      // OpenFaaS's X-Duration-Seconds: the function's duration, seconds with a fraction
      expect(got.headers['x-duration-seconds']).toMatch(/^\d+\.\d{6}$/);
      expect(Number(got.headers['x-duration-seconds'])).toBeGreaterThan(0);
      expect(JSON.parse(got.body)).toEqual(expect.objectContaining({ body: 'later', path: '/path', query: '?q=1', callId }));
      expect((await p.get('/async-function/nope', { method: 'POST', body: 'x' })).status).toBe(404);
      // X-Call-Id is a tracing id: numeric or with ':' is fine, and a repeated one still runs
      for (const id of ['42', 'a:b', '42']) {
        const r = await p.get('/async-function/aecho', { method: 'POST', body: id, headers: { 'X-Callback-Url': cb.url, 'X-Call-Id': id } });
        expect(r.status).toBe(202);
        expect(r.headers.get('x-call-id')).toBe(id);
      }
      expect(await eventually(() => cb.received.length === 4, 20000)).toBe(true);
    } finally {
      await cb.close();
      await p.stop();
      await redis.stop();
    }
  });

  it('refuses a callback URL outside the policy with 400 before queueing anything', async () => {
    const redis = await testRedis();
    const p = await testGateway(redis.url, { MLFAAS_BASIC_AUTH: 'false', MLFAAS_CALLBACK_ALLOW: '127.0.0.1' });
    try {
      seedEchoHttp(p.images);
      expect((await p.json('POST', '/system/functions', aFunction('aecho').minScale(0).build())).status).toBe(202);
      const queued = async () => Object.values(await p.gw.asyncInvocations.queue.getJobCounts()).reduce((a, b) => a + b, 0);
      const before = await queued();
      for (const url of ['not a url', 'http://[::1', 'file:///etc/passwd', 'gopher://127.0.0.1:6379/_INFO', 'http://169.254.169.254/latest/meta-data/',
        'http://[fe80::1]/', 'http://metadata.google.internal/', 'http://example.com/cb']) {
        const r = await p.get('/async-function/aecho', { method: 'POST', body: 'x', headers: { 'X-Callback-Url': url } });
        expect({ url, status: r.status }).toEqual({ url, status: 400 });
        const err = ((await r.json()) as { error: { code: string; field: string; message: string } }).error;
        expect(err).toEqual({ code: 'validation_failed', field: 'X-Callback-Url', message: expect.stringContaining('X-Callback-Url') });
      }
      expect(await queued()).toBe(before);
    } finally {
      await p.stop();
      await redis.stop();
    }
  });

  it('resolves the callback host at delivery: a name for a metadata address is never connected to, a good one is delivered to the ' +
    'address checked', async () => {
    const redis = await testRedis();
    const dataDir = mkdtempSync(join(tmpdir(), 'mlfaas-data-'));
    const good = await callbackServer();
    const trap = await callbackServer(); // reachable on 127.0.0.1: only the policy keeps the callback off it
    // no DNS here: evil.test has a link-local answer beside a reachable one; good.test rebinds to
    // the metadata address after its first answer, so a second resolution would be caught
    const asked: string[] = [];
    const lookup: ResolveAll = async (host) => {
      asked.push(host);
      if (host === 'evil.test') return [{ address: '127.0.0.1', family: 4 }, { address: '169.254.169.254', family: 4 }];
      if (host === 'good.test') return [{ address: asked.filter((h) => h === host).length === 1 ? '127.0.0.1' : '169.254.169.254', family: 4 }];
      throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    };
    const cfg = loadConfig({ ...TEST_ENV, MLFAAS_DATA_DIR: dataDir });
    const asyncOpts: AsyncOptions = { ...cfg.async, attempts: 3, lookup };
    const gw = await startPlatformGateway({ ...cfg, async: asyncOpts }, redis.url);
    try {
      seedEchoHttp(new ImageStore(join(dataDir, 'images')));
      const post = (path: string, init: RequestInit) => fetch(gw.url + path, { method: 'POST', ...init });
      expect((await post('/system/functions',
        { body: JSON.stringify(aFunction('aecho').minScale(1).build()), headers: { 'content-type': 'application/json' } })).status).toBe(202);
      // the reported spellings are refused at submission (400 naming the header)
      for (const url of ['http://169.254.169.254.nip.io/', 'http://metadata.google.internal.nip.io/', 'http://[::a9fe:a9fe]/', 'http://[64:ff9b::a9fe:a9fe]/',
        'http://0xa9fea9fe/', 'http://[2002:a9fe::1]/', 'http://0.0.0.0/']) {
        const r = await post('/async-function/aecho', { body: 'x', headers: { 'X-Callback-Url': url } });
        expect({ url, status: r.status }).toEqual({ url, status: 400 });
        expect(((await r.json()) as { error: { field: string } }).error.field).toBe('X-Callback-Url');
      }
      // names are accepted at submission and judged by what they resolve to at delivery
      const evil = await post('/async-function/aecho', { body: 'evil', headers: { 'X-Callback-Url': `http://evil.test:${trap.port}/cb` } });
      const fine = await post('/async-function/aecho', { body: 'fine', headers: { 'X-Callback-Url': `http://good.test:${good.port}/cb` } });
      expect([evil.status, fine.status]).toEqual([202, 202]);
      expect(await eventually(() => good.received.length === 1, 20000)).toBe(true);
      expect(good.received[0].headers.host).toBe(`good.test:${good.port}`);
      expect(good.received[0].headers['x-call-id']).toBe(fine.headers.get('x-call-id'));
      expect(JSON.parse(good.received[0].body)).toEqual(expect.objectContaining({ body: 'fine' }));
      expect(asked.filter((h) => h === 'good.test')).toEqual(['good.test']);
      // the refused one fails its job at once, with the reason, like a callback that failed
      const failed = async () => (await gw.asyncInvocations.queue.getFailed()).filter((j) => j.data.callId === evil.headers.get('x-call-id'));
      expect(await eventually(async () => (await failed()).length === 1, 20000)).toBe(true);
      const [job] = await failed();
      expect(job.failedReason).toBe('callback refused: host evil.test resolves to 169.254.169.254, link-local (169.254.0.0/16)');
      expect(job.attemptsMade).toBe(1); // not retried
      expect(job.data.result?.status).toBe(200); // the function ran; only the callback was refused
      expect(asked.filter((h) => h === 'evil.test')).toEqual(['evil.test']);
      expect(trap.connections()).toBe(0);
      expect(trap.received).toEqual([]);
    } finally {
      await gw.close();
      await good.close();
      await trap.close();
      await redis.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('delivers every accepted invocation after the gateway is killed with SIGKILL (at-least-once)', async () => {
    const redis = await testRedis();
    const dataDir = mkdtempSync(join(tmpdir(), 'mlfaas-durable-'));
    seedEchoHttp(new ImageStore(join(dataDir, 'images')));
    const cb = await callbackServer();
    const env = { MLFAAS_REDIS_URL: redis.url, MLFAAS_DATA_DIR: dataDir, MLFAAS_ASYNC_CONCURRENCY: '2', MLFAAS_ASYNC_LOCK_MS: '2000' };
    let first = await gatewayProcess(env);
    let second: Awaited<ReturnType<typeof gatewayProcess>> | undefined;
    try {
      const deploy = await fetch(first.url + '/system/functions',
        { method: 'POST', body: JSON.stringify(aFunction('slow').minScale(1).build()), headers: { 'content-type': 'application/json' } });
      expect(deploy.status).toBe(202);
      const n = 12;
      const ids: string[] = [];
      for (let i = 0; i < n; i++) {
        const r = await fetch(first.url + '/async-function/slow?sleep=400', { method: 'POST', body: `job-${i}`, headers: { 'X-Callback-Url': cb.url } });
        expect(r.status).toBe(202);
        ids.push(r.headers.get('x-call-id')!);
      }
      // kill -9 while jobs are running and most are still waiting
      expect(await eventually(() => cb.received.length >= 1, 20000)).toBe(true);
      const before = cb.received.length;
      first.child.kill('SIGKILL');
      await new Promise((r) => first.child.once('exit', r));
      expect(before).toBeLessThan(n);
      second = await gatewayProcess(env);
      const delivered = () => new Set(cb.received.map((c) => c.headers['x-call-id'] as string));
      expect(await eventually(() => delivered().size === n, 45000, 200)).toBe(true);
      expect([...delivered()].sort()).toEqual([...ids].sort());
      for (const c of cb.received) expect(c.headers['x-function-status']).toBe('200');
    } finally {
      if (first.child.exitCode === null) first.child.kill('SIGKILL');
      if (second) {
        second.child.kill('SIGTERM');
        await new Promise((r) => second!.child.once('exit', r));
      }
      await cb.close();
      await redis.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 90000);
});
