/**
 * The node model cache (issue 25, part 4): one fetch per version under concurrency, verification
 * while streaming, LRU eviction within the limit that never takes a version in use, and bounded
 * downloads (size, time, redirects), against a real HTTP server on loopback.
 */
import { createHash } from 'node:crypto';
import { createServer, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ModelCache, modelFileName } from '../../node-runtime/model-cache';
import { planEvictions } from '../../node-runtime/model-cache-policy';
import { ModelFetchError } from '../../node-runtime/model-download';

const sha = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');
const blob = (n: number, seed: number) => Buffer.alloc(n, seed);

let server: Server;
let base = '';
const hits = new Map<string, number>();
const files = new Map<string, Buffer>();
/** Responses held open (the idle and endless cases), ended in afterAll. */
const open: ServerResponse[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    const path = req.url ?? '/';
    hits.set(path, (hits.get(path) ?? 0) + 1);
    if (path === '/slow/a.onnx') {
      // the body comes after a while: concurrent acquires overlap on one fetch
      setTimeout(() => res.writeHead(200).end(files.get('/a.onnx')), 300);
      return;
    }
    if (path === '/endless') {
      res.writeHead(200);
      let sent = 0;
      const pump = () => {
        while (sent < 64 * 1024 * 1024 && res.write(blob(64 * 1024, 7))) sent += 64 * 1024;
        if (sent < 64 * 1024 * 1024 && !res.destroyed) res.once('drain', pump);
      };
      res.on('close', () => res.removeAllListeners('drain'));
      pump();
      return;
    }
    if (path === '/huge') return void res.writeHead(200, { 'content-length': String(1024 ** 3) }).end();
    if (path === '/idle') {
      res.writeHead(200);
      res.write('x');
      open.push(res);
      return;
    }
    if (path === '/loop') return void res.writeHead(302, { location: '/loop' }).end();
    if (path === '/moved') return void res.writeHead(301, { location: '/a.onnx' }).end();
    const f = files.get(path);
    if (!f) return void res.writeHead(404).end('no');
    res.writeHead(200, { 'content-length': String(f.length) }).end(f);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  files.set('/a.onnx', blob(1000, 1));
  files.set('/b.onnx', blob(1000, 2));
  files.set('/c.onnx', blob(1000, 3));
});

afterAll(async () => {
  for (const r of open) r.destroy();
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

let dir: string;
let store: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'mlfaas-mcache-'));
  store = join(dir, 'store');
  mkdirSync(store);
  hits.clear();
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const cacheOf = (maxBytes = 10_000, limits = {}) => new ModelCache({ dir: join(dir, 'cache'), storeDir: store, maxBytes, limits });
const http = (path: string, content?: Buffer) => ({ uri: base + path, scheme: 'http' as const, sha256: sha(content ?? files.get(path)!) });
const tmpLeft = () => readdirSync(join(dir, 'cache')).filter((n) => n.startsWith('.tmp-'));

describe('ModelCache', () => {
  test('concurrent acquires of one version fetch it once; the file is verified, read-only and shared', async () => {
    const cache = cacheOf();
    const want = { ...http('/slow/a.onnx', files.get('/a.onnx')) };
    const paths = await Promise.all(Array.from({ length: 8 }, (_, i) => cache.acquire(want, `r${i}`)));
    expect(hits.get('/slow/a.onnx')).toBe(1);
    expect(new Set(paths).size).toBe(1);
    expect(paths[0]).toBe(join(dir, 'cache', want.sha256, 'model.onnx'));
    expect(readFileSync(paths[0])).toEqual(files.get('/a.onnx'));
    expect(statSync(paths[0]).mode & 0o777).toBe(0o444);
    // a later acquire (another replica) is a cache hit
    await cache.acquire(want, 'r9');
    expect(hits.get('/slow/a.onnx')).toBe(1);
  });

  test('a checksum mismatch fails every waiter with a clear error and leaves nothing behind', async () => {
    const cache = cacheOf();
    const wrong = { uri: `${base}/a.onnx`, scheme: 'http' as const, sha256: sha('something else') };
    const all = await Promise.allSettled([cache.acquire(wrong, 'r1'), cache.acquire(wrong, 'r2')]);
    for (const r of all) {
      expect(r.status).toBe('rejected');
      const e = (r as PromiseRejectedResult).reason as Error;
      expect(e).toBeInstanceOf(ModelFetchError);
      expect(e.message).toMatch(/checksum mismatch: mlfaas.model.sha256 is [0-9a-f]{64}, the 1000 bytes fetched hash to [0-9a-f]{64}/);
    }
    expect(hits.get('/a.onnx')).toBe(1);
    expect(existsSync(join(dir, 'cache', wrong.sha256))).toBe(false);
    expect(tmpLeft()).toEqual([]);
    expect(cache.inUse(wrong.sha256)).toBe(false);
  });

  test('LRU eviction within the limit never takes a version in use', async () => {
    const cache = cacheOf(2500); // room for two 1000-byte versions
    const [a, b, c] = ['/a.onnx', '/b.onnx', '/c.onnx'].map((p) => http(p));
    await cache.acquire(a, 'ra');
    await cache.acquire(b, 'rb');
    cache.release('rb'); // b is idle; a is still held by a running replica
    await new Promise((r) => setTimeout(r, 20));
    await cache.acquire(c, 'rc'); // over the limit: b goes (a, though older, is in use)
    const cached = () => cache.entries().map((e) => e.sha256).sort();
    expect(cached()).toEqual([a.sha256, c.sha256].sort());
    cache.release('ra');
    cache.release('rc');
    await cache.acquire(b, 'rb2'); // a is now the least recently used idle version
    expect(cached()).toEqual([b.sha256, c.sha256].sort());
    expect(cache.entries().reduce((s, e) => s + e.bytes, 0)).toBeLessThanOrEqual(2500);
  });

  test('planEvictions (the policy both cache edges use): oldest idle first; in use, kept and recently used never', () => {
    const e = (s: string, lastUsed: number, inUse = false) => ({ sha256: s, bytes: 10, lastUsed, inUse });
    const evict = (...a: Parameters<typeof planEvictions>) => planEvictions(...a).evict;
    expect(evict([e('a', 1, true), e('b', 2), e('c', 3), e('d', 4)], 20, { keep: ['d'] })).toEqual(['b', 'c']);
    expect(evict([e('d', 4), e('c', 3), e('b', 2), e('a', 1, true)], 20, { keep: ['d'] })).toEqual(['b', 'c']); // order of the entries does not matter
    expect(evict([e('y', 5), e('x', 5), e('z', 9)], 10)).toEqual(['x', 'y']); // ties by sha256
    expect(planEvictions([e('a', 1, true), e('b', 2, true)], 5)).toEqual({ evict: [], totalBytes: 20, keptBytes: 20, overBytes: 15 });
    expect(evict([e('a', 1), e('b', 2)], 20)).toEqual([]);
    // used within minIdleMs of now: kept; the next oldest goes instead
    expect(evict([e('a', 950), e('b', 100), e('c', 200)], 20, { now: 1000, minIdleMs: 100 })).toEqual(['b']);
    expect(planEvictions([e('a', 950), e('b', 960)], 0, { now: 1000, minIdleMs: 100 })).toMatchObject({ evict: [], overBytes: 20 });
  });

  test('downloads are bounded: endless body, oversized Content-Length, idle server, redirect loop, 404', async () => {
    const cache = cacheOf(1024 * 1024, { idleMs: 500, timeoutMs: 20_000 });
    const z = '0'.repeat(64);
    await expect(cache.acquire({ uri: `${base}/endless`, scheme: 'http', sha256: z }, 'r')).rejects.toThrow(/more than 1048576 bytes/);
    await expect(cache.acquire({ uri: `${base}/huge`, scheme: 'http', sha256: z }, 'r')).rejects.toThrow(/1073741824 bytes, above the model size limit/);
    await expect(cache.acquire({ uri: `${base}/idle`, scheme: 'http', sha256: z }, 'r')).rejects.toThrow(/no byte for 500 ms/);
    await expect(cache.acquire({ uri: `${base}/loop`, scheme: 'http', sha256: z }, 'r')).rejects.toThrow(/more than 5 redirects/);
    await expect(cache.acquire({ uri: `${base}/missing.onnx`, scheme: 'http', sha256: z }, 'r')).rejects.toThrow(/answered HTTP 404/);
    await expect(cache.acquire({ uri: 'http://127.0.0.1:1/x.onnx', scheme: 'http', sha256: z }, 'r')).rejects.toThrow(/cannot reach the registry/);
    expect(tmpLeft()).toEqual([]);
    expect(cache.entries()).toEqual([]);
  }, 30_000);

  test('the whole transfer has a deadline', async () => {
    const cache = cacheOf(1024 * 1024, { idleMs: 10_000, timeoutMs: 400 });
    await expect(cache.acquire({ uri: `${base}/idle`, scheme: 'http', sha256: '0'.repeat(64) }, 'r')).rejects.toThrow(/not fetched within 400 ms/);
    expect(tmpLeft()).toEqual([]);
  });

  test('a redirect is followed (bounded)', async () => {
    const cache = cacheOf();
    const p = await cache.acquire({ ...http('/a.onnx'), uri: `${base}/moved` }, 'r');
    expect(readFileSync(p)).toEqual(files.get('/a.onnx'));
  });

  test('file:// reads the model store; a symlink out of it is refused', async () => {
    const cache = cacheOf();
    mkdirSync(join(store, 'digits'));
    writeFileSync(join(store, 'digits', 'v1.onnx'), 'model one');
    const p = await cache.acquire({ uri: 'file:///digits/v1.onnx', scheme: 'file', storePath: 'digits/v1.onnx', sha256: sha('model one') }, 'r');
    expect(readFileSync(p, 'utf8')).toBe('model one');
    writeFileSync(join(dir, 'secret.onnx'), 'outside');
    symlinkSync(join(dir, 'secret.onnx'), join(store, 'link.onnx'));
    await expect(cache.acquire({ uri: 'file:///link.onnx', scheme: 'file', storePath: 'link.onnx', sha256: sha('outside') }, 'r'))
      .rejects.toThrow(/leads out of the model store/);
    await expect(cache.acquire({ uri: 'file:///none.onnx', scheme: 'file', storePath: 'none.onnx', sha256: sha('x') }, 'r'))
      .rejects.toThrow(/no such file in the model store/);
  });

  test('the file keeps the URI extension (a TorchScript .pt stays .pt)', () => {
    expect(modelFileName('http://h/m/resnet.pt?x=1')).toBe('model.pt');
    expect(modelFileName('http://h/m/blob')).toBe('model.onnx');
    expect(modelFileName('file:///a/b.ONNX')).toBe('model.onnx');
  });
});
