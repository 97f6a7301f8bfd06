import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EventEmitter } from 'node:events';
import { request, type Server } from 'node:http';
import express, { NextFunction, Request, Response } from 'express';
import { toHttp } from '../../gateway/errors';
import { catchAsync } from '../../gateway/lib/catch-async';
import type { ScalingEvent } from '../../gateway/registry/scaling-events';
import { overviewFromStatus, uiFile, uiRoutes } from '../../gateway/routes/ui';
import { OverviewLike, UiStreamHub, unseenEvents } from '../../gateway/routes/ui-stream';

const auth = { enabled: true, user: 'admin', password: 'secret' };
const basic = (u: string, p: string) => `Basic ${Buffer.from(`${u}:${p}`).toString('base64')}`;
const good = { authorization: basic('admin', 'secret') };

const ev = (to: number, reason: string): ScalingEvent => ({ time: `2026-11-27T11:00:0${to}Z`, policy: 'hybrid', action: 'replicas', from: to - 1, to, reason });

describe('uiFile (pure)', () => {
  const root = '/srv/ui';
  it('maps paths below root, index.html for folders', () => {
    expect(uiFile(root, '')).toBe('/srv/ui/index.html');
    expect(uiFile(root, 'app.js')).toBe('/srv/ui/app.js');
    expect(uiFile(root, 'pages/')).toBe('/srv/ui/pages/index.html');
    expect(uiFile(root, 'pages/function.js')).toBe('/srv/ui/pages/function.js');
  });
  it('refuses escapes, dot-files, encoded separators and unknown types', () => {
    for (const p of ['../package.json', 'pages/../../x.js', '%2e%2e/x.js', '..%2fx.js', '.env', 'a\\..\\b.js', 'x.ts', 'x', '%E0%A4%A', 'a%00.js']) {
      expect(uiFile(root, p)).toBeUndefined();
    }
  });
});

describe('unseenEvents (pure)', () => {
  const [a, b, c] = [ev(1, 'a'), ev(2, 'b'), ev(3, 'c')];
  it('returns what came after the last one seen, oldest first', () => {
    expect(unseenEvents([c, b, a], JSON.stringify(a))).toEqual([b, c]);
    expect(unseenEvents([c, b, a], JSON.stringify(c))).toEqual([]);
  });
  it('returns the whole window when nothing was seen or the last one fell out of it', () => {
    expect(unseenEvents([c, b], undefined)).toEqual([b, c]);
    expect(unseenEvents([c, b], JSON.stringify(a))).toEqual([b, c]);
  });
});

describe('/ui/ routes', () => {
  let server: Server;
  let base: string;
  let root: string;
  let hub: UiStreamHub;
  const events: ScalingEvent[] = [];
  let overview: OverviewLike = { functions: [{ name: 'digits-classify', namespace: 'openfaas-fn' }] };

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'ui-test-'));
    writeFileSync(join(root, 'index.html'), '<!doctype html><title>t</title>');
    writeFileSync(join(root, 'app.js'), '// app');
    writeFileSync(join(root, '.secret.js'), '// no');
    writeFileSync(join(root, 'notes.txt'), 'no');
    mkdirSync(join(root, 'dir.js'));
    hub = new UiStreamHub({ overview: async () => overview, scalingEvents: async () => [...events] }, { intervalMs: 50, heartbeatMs: 100 });
    const app = express();
    app.use(catchAsync(uiRoutes({ auth, origins: () => new Set(['http://127.0.0.1:1']), hub, root })));
    app.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => {
      const h = toHttp(err);
      res.status(h.status).set(h.headers).json(h.body);
    });
    server = app.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    hub.close();
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
    rmSync(root, { recursive: true, force: true });
  });

  it('asks for credentials (401 with WWW-Authenticate) and serves nothing without the right ones', async () => {
    for (const headers of [{} as Record<string, string>, { authorization: basic('admin', 'wrong') }]) {
      for (const path of ['/ui/', '/ui/app.js', '/ui/api/stream']) {
        const r = await fetch(base + path, { headers });
        expect(r.status).toBe(401);
        expect(r.headers.get('www-authenticate')).toBe('Basic realm="mlfaas"');
        expect(((await r.json()) as any).error.code).toBeDefined();
      }
    }
  });

  it('serves the files with their types, and 404s escapes, dot-files, unknown types and folders', async () => {
    const index = await fetch(`${base}/ui/`, { headers: good });
    expect(index.status).toBe(200);
    expect(index.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(await index.text()).toContain('<title>t</title>');
    const js = await fetch(`${base}/ui/app.js`, { headers: good });
    expect(js.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    const redirect = await fetch(`${base}/ui`, { headers: good, redirect: 'manual' });
    expect(redirect.status).toBe(301);
    for (const p of ['/ui/.secret.js', '/ui/notes.txt', '/ui/dir.js', '/ui/missing.js', '/ui/..%2fpackage.json', '/ui/pages%2f..%2f..%2fpackage.json']) {
      const r = await fetch(base + p, { headers: good });
      expect([p, r.status]).toEqual([p, 404]);
      expect(((await r.json()) as any).error.message).toBeDefined();
    }
    // fetch would normalise `..` away: sent as written, through node:http
    for (const p of ['/ui/../package.json', '/ui/%2e%2e/package.json', '/ui/pages/../../package.json']) {
      const status = await new Promise<number>((res, rej) => {
        const q = request(`${base}${p}`, { headers: good, timeout: 10000 }, (m) => {
          m.resume();
          res(m.statusCode ?? 0);
        });
        q.on('error', rej);
        q.end();
      });
      expect([p, status]).not.toEqual([p, 200]);
    }
  });

  it('refuses the stream to a foreign Origin', async () => {
    const r = await fetch(`${base}/ui/api/stream`, { headers: { ...good, origin: 'http://evil.example' } });
    expect(r.status).toBe(403);
    expect(((await r.json()) as any).error.field).toBe('Origin');
  });

  it('streams overviews, each new scaling event once, heartbeats; a disconnect leaves the hub', async () => {
    events.splice(0, events.length, ev(1, 'first'));
    const ac = new AbortController();
    const timer = setTimeout(() => ac.abort(), 20000);
    const r = await fetch(`${base}/ui/api/stream`, { headers: { ...good, origin: 'http://127.0.0.1:1' }, signal: ac.signal });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    const reader = r.body!.getReader();
    const dec = new TextDecoder();
    let text = '';
    const readUntil = async (pred: (t: string) => boolean) => {
      for (let i = 0; i < 1000 && !pred(text); i++) {
        const { value, done } = await reader.read();
        if (done) break;
        text += dec.decode(value);
      }
      return pred(text);
    };
    expect(await readUntil((t) => t.includes('event: overview') && t.includes('"reason":"first"'))).toBe(true);
    expect(text).toContain('"function":"digits-classify"');
    events.unshift(ev(2, 'second'));
    expect(await readUntil((t) => t.includes('"reason":"second"') && t.includes(': heartbeat'))).toBe(true);
    expect(text.split('"reason":"first"').length - 1).toBe(1);
    expect(hub.size).toBe(1);
    ac.abort();
    clearTimeout(timer);
    for (let i = 0; i < 200 && hub.size > 0; i++) await new Promise((res) => setTimeout(res, 25));
    expect(hub.size).toBe(0);
  });

  it('overviewFromStatus lists functions with their replica counts, no invented fields', () => {
    const status = { name: 'f', namespace: 'n', image: 'i', kind: 'inference', replicas: 2, availableReplicas: 1 } as never;
    const ov = overviewFromStatus([status], new Date(0));
    const f = { name: 'f', namespace: 'n', kind: 'inference', image: 'i', replicas: { ready: 1, desired: 2 } };
    expect(ov).toEqual({ at: '1970-01-01T00:00:00.000Z', functions: [f], jobs: [] });
    overview = ov;
  });

  it('drops a client whose unsent bytes pass the bound, and keeps one that reads', async () => {
    const fake = () => {
      const res = Object.assign(new EventEmitter(), {
        writableLength: 0, writableEnded: false, destroyed: false, chunks: [] as string[],
        status() { return res; }, set() { return res; }, flushHeaders() {},
        write(c: string) { res.chunks.push(c); return true; },
        end() { res.writableEnded = true; },
      });
      return { req: new EventEmitter(), res };
    };
    const h = new UiStreamHub({ overview: async () => overview, scalingEvents: async () => [] }, { intervalMs: 10000, maxBufferedBytes: 1000 });
    const slow = fake();
    const reader = fake();
    h.handle(slow.req as never, slow.res as never);
    h.handle(reader.req as never, reader.res as never);
    expect(h.size).toBe(2);
    slow.res.writableLength = 5000; // the socket stopped draining
    await h.tick();
    expect(h.size).toBe(1);
    expect(slow.res.writableEnded).toBe(true);
    expect(reader.res.chunks.some((c) => c.startsWith('event: overview'))).toBe(true);
    reader.req.emit('close');
    expect(h.size).toBe(0);
  });
});
