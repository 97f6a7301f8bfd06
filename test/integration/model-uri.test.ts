/**
 * Models by URI (issue 25, part 4), end to end: a real gateway and local agent, a real HTTP model
 * registry on loopback serving two tiny ONNX models with different answers (the digits model with
 * its last bias pushed towards class 1, resp. 2), the ml-inference runtime in real replicas.
 *
 * Deploy v1 by URI (an image built without model.onnx), put it under a bounded load, deploy v2 by
 * URI: 0 failed requests through the rolling update, answers switch to v2, each version fetched
 * once. A deploy with a wrong sha256: the new replica fails with the reason, the update stalls,
 * v2 keeps serving. Sandboxed (root), a function sees its model read-only and nothing else of the
 * cache. Bad annotations: 400 naming them.
 */
import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { onnx } from 'onnx-proto';
import { buildFunction } from '../../cli/build';
import { REPO_ROOT } from '../../gateway/config';
import { StackFunction } from '../../cli/stack';
import { sandboxUnavailable } from '../../node-runtime/sandbox';
import { eventually, testGateway, testRedis, TestPlatform } from '../helpers/platform';

const DIGITS = join(REPO_ROOT, 'functions', 'digits-classify');
const NS = 'openfaas-fn';
/** MLFAAS_ISOLATION=off runs the suite with plain child processes (MODEL_PATH is then the cache file's host path). */
const sandboxed = !sandboxUnavailable() && process.env.MLFAAS_ISOLATION !== 'off';
const sha = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');
/** Replicas of the function under the rolling update. */
const REPLICAS = 2;
/** A replica's model version: its MLFAAS_MODEL_VERSION. */
const versionOf = (pid?: number) => {
  try {
    return readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0').find((l) => l.startsWith('MLFAAS_MODEL_VERSION='))?.slice(21);
  } catch {
    return undefined; // gone meanwhile
  }
};

/** The digits model with fc2.bias[cls] raised by 1000: it answers `cls` for every input. */
function variant(cls: number): Buffer {
  const m = onnx.ModelProto.decode(readFileSync(join(DIGITS, 'model.onnx')));
  const bias = m.graph!.initializer!.find((t) => t.name === 'fc2.bias')!;
  const raw = Buffer.from(bias.rawData!);
  const f = new Float32Array(raw.buffer.slice(raw.byteOffset, raw.byteOffset + raw.length));
  f[cls] += 1000;
  bias.rawData = new Uint8Array(f.buffer);
  return Buffer.from(onnx.ModelProto.encode(m).finish());
}

describe('models by URI through the local provider', () => {
  let redis: Awaited<ReturnType<typeof testRedis>>;
  let p: TestPlatform;
  let registry: Server;
  let base = '';
  let work: string;
  const models: Record<string, Buffer> = {};
  const hits = new Map<string, number>();
  const digit = readFileSync(join(DIGITS, 'digit.json'));

  const fn = (name: string, uri: string, sha256: string) => ({
    service: name,
    image: 'test/digits-uri:1',
    labels: { 'com.openfaas.scale.min': String(REPLICAS), 'com.openfaas.scale.max': String(REPLICAS) },
    annotations: { 'mlfaas.model.uri': uri, 'mlfaas.model.sha256': sha256 },
  });
  const invoke = async (name: string): Promise<{ status: number; label?: string }> => {
    const res = await fetch(`${p.gw.url}/function/${name}`, { method: 'POST', body: digit, headers: { 'content-type': 'application/json' } });
    const text = await res.text();
    if (res.status !== 200) return { status: res.status };
    const doc = JSON.parse(text) as { predictions: Array<{ label: string }> };
    return { status: 200, label: doc.predictions[0].label };
  };
  const available = (name: string, n = 1) =>
    eventually(async () => {
      const f = (await (await p.get(`/system/function/${name}`)).json()) as { availableReplicas?: number };
      return (f.availableReplicas ?? 0) >= n;
    }, 90_000, 200);
  /** `versions` of GET /v2/models/digits through the gateway. */
  const metadataVersions = async () => {
    const res = await fetch(`${p.gw.url}/v2/models/digits`);
    const body = (await res.json()) as { versions?: string[]; error?: string };
    return res.status === 200 ? body.versions : [`HTTP ${res.status}: ${body.error}`];
  };
  const logs = async (name: string) => (await p.get(`/system/logs?name=${name}&tail=200`)).text();

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'mlfaas-model-uri-'));
    models['/v1/model.onnx'] = variant(1);
    models['/v2/model.onnx'] = variant(2);
    registry = createServer((req, res) => {
      hits.set(req.url ?? '', (hits.get(req.url ?? '') ?? 0) + 1);
      const body = models[req.url ?? ''] ?? (req.url === '/v3/model.onnx' ? models['/v1/model.onnx'] : undefined);
      if (!body) return void res.writeHead(404).end();
      res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(body);
    });
    await new Promise<void>((r) => registry.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(registry.address() as AddressInfo).port}`;
    mkdirSync(join(work, 'store', 'digits'), { recursive: true });
    writeFileSync(join(work, 'store', 'digits', 'v1.onnx'), models['/v1/model.onnx']);
    redis = await testRedis(0);
    p = await testGateway(redis.url, { MLFAAS_AUTOSCALER: 'false', MLFAAS_MODEL_STORE: join(work, 'store'), MLFAAS_MODEL_CACHE_BYTES: '64Mi',
      MLFAAS_ISOLATION: sandboxed ? 'auto' : 'off' });
    // the image: the digits handler without its model.onnx (mlfaas build takes it, given the uri annotation)
    const handler = join(work, 'handler');
    mkdirSync(handler);
    for (const f of ['handler.js', 'labels.json']) copyFileSync(join(DIGITS, f), join(handler, f));
    const stackFn: StackFunction = { name: 'digits', lang: 'ml-inference', handler, image: 'test/digits-uri:1', environment: {}, labels: {},
      annotations: { 'mlfaas.model.uri': `${base}/v1/model.onnx` } };
    const stackFile = join(work, 'stack.yml');
    expect(() => buildFunction({ ...stackFn, annotations: {} }, stackFile, p.cfg.templatesDir, p.images)).toThrow(/needs its ONNX model/);
    buildFunction(stackFn, stackFile, p.cfg.templatesDir, p.images);
  }, 60_000);

  afterAll(async () => {
    await p?.stop();
    await redis?.stop();
    registry?.closeAllConnections();
    await new Promise((r) => registry?.close(r));
    rmSync(work, { recursive: true, force: true });
  });

  test('deploy v1 by URI, roll to v2 under load with 0 failed requests; a wrong sha256 stalls the update and v2 keeps serving', async () => {
    const v1 = fn('digits', `${base}/v1/model.onnx`, sha(models['/v1/model.onnx']));
    expect((await p.json('POST', '/system/functions', v1)).status).toBe(202);
    expect(await available('digits', REPLICAS)).toBe(true);
    expect(await invoke('digits')).toEqual({ status: 200, label: '1' });
    const [ep] = await p.gw.provider.endpoints({ name: 'digits', namespace: NS });
    const env = readFileSync(`/proc/${ep.pid}/environ`, 'latin1').split('\0');
    const v1Version = sha(models['/v1/model.onnx']).slice(0, 12);
    expect(env).toContain(`MLFAAS_MODEL_VERSION=${v1Version}`);
    const modelPath = !sandboxed ? /model-cache\/[0-9a-f]{64}\/model\.onnx$/ : /^MODEL_PATH=\/var\/openfaas\/model\/model\.onnx$/;
    expect(env.find((l) => l.startsWith('MODEL_PATH='))).toMatch(modelPath);

    // the v2 metadata through the gateway names the version: the sha256's first 12 hex
    expect(await metadataVersions()).toEqual([v1Version]);

    // a bounded load (3 workers, at most 6000 requests and 300 s; a 4th asks the metadata, at most 2000 times) that overlaps
    // the whole update: it starts before the deploy of v2 and goes on until every replica runs v2 and is ready, then 60 more requests
    const results: Array<{ status: number; label?: string; at: number }> = [];
    let stop = false;
    const deadline = Date.now() + 300_000;
    const worker = async () => {
      while (!stop && results.length < 6000 && Date.now() < deadline) {
        const r = await invoke('digits').catch((e: Error) => ({ status: 0, label: e.message }));
        results.push({ ...r, at: Date.now() });
      }
    };
    // and the model's metadata asked all along: every answer names one version, v1's or v2's
    const seen: string[] = [];
    const asker = async () => {
      while (!stop && seen.length < 2000 && Date.now() < deadline) seen.push(JSON.stringify(await metadataVersions().catch((e: Error) => e.message)));
    };
    const load = Promise.all([worker(), worker(), worker(), asker()]);
    expect(await eventually(() => results.length >= 20, 30_000)).toBe(true);
    const v2 = fn('digits', `${base}/v2/model.onnx`, sha(models['/v2/model.onnx']));
    const deployedAt = Date.now();
    expect((await p.json('PUT', '/system/functions', v2)).status).toBe(202);
    const v2Version = sha(models['/v2/model.onnx']).slice(0, 12);
    // done: every replica (old ones draining included) is a v2 one and ready, as many as the function wants
    const updated = await eventually(async () => {
      const eps = await p.gw.provider.endpoints({ name: 'digits', namespace: NS });
      return eps.length === REPLICAS && eps.every((e) => e.state === 'ready' && versionOf(e.pid) === v2Version);
    }, 180_000, 200);
    const updatedAt = Date.now();
    const cut = results.length;
    await eventually(() => results.length >= cut + 60 || Date.now() > deadline, 60_000);
    stop = true;
    await load;
    const during = results.filter((r) => r.at >= deployedAt && r.at <= updatedAt).length;
    const failed = results.filter((r) => r.status !== 200);
    expect({ updated, failed: failed.slice(0, 5), nFailed: failed.length }).toEqual({ updated: true, failed: [], nFailed: 0 });
    // the load covered the update: requests before the deploy, during it, and 60 after it was done
    expect(results.filter((r) => r.at < deployedAt).length).toBeGreaterThanOrEqual(20);
    expect(results.length - cut).toBeGreaterThanOrEqual(60);
    expect(during).toBeGreaterThan(0);
    // every answer once the update was done is v2's; before, v1's
    expect(results.slice(cut).filter((r) => r.label !== '2').slice(0, 5)).toEqual([]);
    expect(results.filter((r) => r.at < deployedAt).every((r) => r.label === '1')).toBe(true);
    const firstV2 = results.findIndex((r) => r.label === '2');
    expect(firstV2).toBeGreaterThan(0);
    expect(hits.get('/v1/model.onnx')).toBe(1);
    expect(hits.get('/v2/model.onnx')).toBe(1);
    expect(await metadataVersions()).toEqual([v2Version]);
    expect([...new Set(seen)].sort()).toEqual([JSON.stringify([v1Version]), JSON.stringify([v2Version])].sort());
    process.stdout.write(`model-uri rollout (${REPLICAS} replicas, ${sandboxed ? 'sandboxed' : 'unsandboxed'}): ${results.length} requests, ` +
      `${failed.length} failed; update took ${updatedAt - deployedAt} ms with ${during} requests answered during it; first v2 answer at #${firstV2}; ` +
      `${seen.length} metadata requests\n`);

    // a wrong checksum (v1's bytes under v3's URI, v2's sha256 claimed for them)
    const bad = fn('digits', `${base}/v3/model.onnx`, sha(models['/v2/model.onnx']).replace(/^./, (c) => (c === 'a' ? 'b' : 'a')));
    expect((await p.json('PUT', '/system/functions', bad)).status).toBe(202);
    const crashed = await eventually(async () => {
      const eps = await p.gw.provider.endpoints({ name: 'digits', namespace: NS });
      return eps.find((e) => e.state === 'crashed' && /checksum mismatch/.test(e.lastError ?? ''));
    }, 60_000, 200);
    expect(crashed?.lastError).toMatch(/failed to start: .*\/v3\/model\.onnx: checksum mismatch: mlfaas\.model\.sha256 is [0-9a-f]{64}/);
    const stalled = /rolling update stalled: .*checksum mismatch.*\d old replica\(s\) keep serving/;
    expect(await eventually(async () => stalled.test(await logs('digits')), 30_000, 200)).toBe(true);
    for (let i = 0; i < 20; i++) expect(await invoke('digits')).toEqual({ status: 200, label: '2' });
    expect(await metadataVersions()).toEqual([v2Version]); // the stalled version is served by no replica
    expect(hits.get('/v2/model.onnx')).toBe(1);
    // fixed: the right sha256 for v3 (v1's bytes) completes the update, from the cache (v1 is the same version)
    const fixed = fn('digits', `${base}/v3/model.onnx`, sha(models['/v1/model.onnx']));
    expect((await p.json('PUT', '/system/functions', fixed)).status).toBe(202);
    expect(await eventually(async () => (await invoke('digits')).label === '1', 90_000, 200)).toBe(true);
    await p.json('DELETE', '/system/functions', { functionName: 'digits' });
  }, 400_000);

  const maybe = sandboxed ? test : test.skip;
  maybe('sandboxed: the function reads its model (file:// from the store) read-only and sees nothing else of the cache', async () => {
    const body = readFileSync(join(work, 'store', 'digits', 'v1.onnx'));
    const res = await p.json('POST', '/system/functions', {
      service: 'peek', image: 'ghcr.io/openfaas/alpine:latest', envProcess: 'sh',
      annotations: { 'mlfaas.model.uri': 'file:///digits/v1.onnx', 'mlfaas.model.sha256': sha(body) },
    });
    expect(res.status).toBe(202);
    expect(await available('peek')).toBe(true);
    const run = async (script: string) => (await (await fetch(`${p.gw.url}/function/peek`, { method: 'POST', body: script })).text()).trim();
    expect(await run('echo $MODEL_PATH $MLFAAS_MODEL_VERSION')).toBe(`/var/openfaas/model/model.onnx ${sha(body).slice(0, 12)}`);
    expect(await run('sha256sum $MODEL_PATH | cut -d" " -f1')).toBe(sha(body));
    expect(await run('(echo x >> $MODEL_PATH) 2>/dev/null && echo WROTE || echo denied')).toBe('denied');
    expect(await run('(rm -f $MODEL_PATH) 2>/dev/null; test -e $MODEL_PATH && echo kept || echo GONE')).toBe('kept');
    expect(await run('ls /var/openfaas/model')).toBe('model.onnx');
    const cache = join(p.dataDir, 'model-cache');
    expect(await run(`ls ${cache} >/dev/null 2>&1 && echo LEAK || echo denied`)).toBe('denied');
    expect(await run(`ls ${join(work, 'store')} >/dev/null 2>&1 && echo LEAK || echo denied`)).toBe('denied');
    await p.json('DELETE', '/system/functions', { functionName: 'peek' });
  }, 120_000);

  test('bad model annotations are a 400 naming the annotation', async () => {
    const ok = sha('x');
    const cases: Array<[Record<string, string>, string]> = [
      [{ 'mlfaas.model.uri': 'ftp://h/m.onnx', 'mlfaas.model.sha256': ok }, 'annotations.mlfaas.model.uri'],
      [{ 'mlfaas.model.uri': 'file:///../etc/passwd', 'mlfaas.model.sha256': ok }, 'annotations.mlfaas.model.uri'],
      [{ 'mlfaas.model.uri': 'https://u:p@h/m.onnx', 'mlfaas.model.sha256': ok }, 'annotations.mlfaas.model.uri'],
      [{ 'mlfaas.model.uri': 'https://h/m.onnx' }, 'annotations.mlfaas.model.sha256'],
      [{ 'mlfaas.model.uri': 'https://h/m.onnx', 'mlfaas.model.sha256': 'abc' }, 'annotations.mlfaas.model.sha256'],
      [{ 'mlfaas.model.sha256': ok }, 'annotations.mlfaas.model.sha256'],
    ];
    for (const [annotations, field] of cases) {
      const res = await p.json('POST', '/system/functions', { service: 'badmodel', image: 'test/digits-uri:1', annotations });
      expect({ status: res.status, field: ((await res.json()) as { error?: { field?: string } }).error?.field }).toEqual({ status: 400, field });
    }
  });
});
