/**
 * Models by URI on Kubernetes (issue 25, part 4): the Deployment the provider sends the (fake) API
 * server carries the fetch init container, the node's hostPath cache directory of the version and
 * the function's read-only mount; and the init container's script, run here with /bin/sh against
 * a loopback registry, fetches once, verifies, bounds the size and refuses a link out of the store.
 */
import { AppsV1Api, type V1Deployment } from '@kubernetes/client-node';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { kubeConfig } from '../../gateway/providers/kubernetes/kube-config';
import { KubernetesProvider } from '../../gateway/providers/kubernetes/kubernetes-provider';
import { MODEL_FETCH_SCRIPT, NODE_MODEL_CACHE_DIR } from '../../gateway/providers/kubernetes/model-init';
import { parseDeployment } from '../../gateway/registry/function-spec';
import { FakeKube } from '../helpers/fake-kube/server';
import { aFunction } from '../helpers/fixtures';

const sha = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');

describe('a model by URI in the Deployment (fake API server)', () => {
  const kube = new FakeKube({ token: 't' });
  let provider: KubernetesProvider;
  beforeAll(async () => {
    await kube.start();
    kube.store.create('v1/namespaces', undefined, { metadata: { name: 'openfaas-fn' } }, 'namespaces');
    provider = new KubernetesProvider(kubeConfig({ server: kube.url, token: 't', insecure: true }), { version: { release: 't', sha: 't' } });
    await provider.start();
  });
  afterAll(async () => {
    await provider.close();
    await kube.stop();
  });

  test('init container, hostPath version directory, read-only mount, MODEL_PATH and MLFAAS_MODEL_VERSION', async () => {
    const digest = sha('model');
    const body = aFunction('m').env('MODEL_PATH', 'mine.onnx').annotation('mlfaas.model.uri', 'https://models.example/m/v1.onnx')
      .annotation('mlfaas.model.sha256', digest).build();
    await provider.deploy(parseDeployment(body));
    const apps = kubeConfig({ server: kube.url, token: 't', insecure: true }).makeApiClient(AppsV1Api);
    const d: V1Deployment = await apps.readNamespacedDeployment({ name: 'm', namespace: 'openfaas-fn' });
    const pod = d.spec!.template.spec!;
    expect(pod.initContainers?.map((c) => c.name)).toEqual(['mlfaas-model-fetch']);
    const init = pod.initContainers![0];
    expect(init.env).toEqual(expect.arrayContaining([{ name: 'MODEL_URI', value: 'https://models.example/m/v1.onnx' }, { name: 'MODEL_SHA256', value: digest }]));
    expect(init.command?.[2]).toBe(MODEL_FETCH_SCRIPT); // the URI never spliced into the script
    const hostPath = { path: `${NODE_MODEL_CACHE_DIR}/${digest}`, type: 'DirectoryOrCreate' };
    expect(pod.volumes).toEqual(expect.arrayContaining([{ name: 'mlfaas-model', hostPath }]));
    const main = pod.containers[0];
    expect(main.volumeMounts).toEqual(expect.arrayContaining([{ name: 'mlfaas-model', mountPath: '/var/openfaas/model', readOnly: true }]));
    expect(main.env?.filter((e) => e.name === 'MODEL_PATH')).toEqual([{ name: 'MODEL_PATH', value: '/var/openfaas/model/model.onnx' }]);
    expect(main.env).toEqual(expect.arrayContaining([{ name: 'MLFAAS_MODEL_VERSION', value: digest.slice(0, 12) }]));
    // a new version is a new pod template: the Deployment rolls (maxUnavailable 0)
    const v2 = sha('model 2');
    await provider.update(parseDeployment({ ...body, annotations: { ...body.annotations, 'mlfaas.model.sha256': v2 } }));
    const d2 = await apps.readNamespacedDeployment({ name: 'm', namespace: 'openfaas-fn' });
    expect(d2.spec!.template.spec!.volumes).toEqual(expect.arrayContaining([expect.objectContaining({ hostPath: expect.objectContaining({
      path: `${NODE_MODEL_CACHE_DIR}/${v2}` }) })]));
    expect(d2.spec!.strategy?.rollingUpdate?.maxUnavailable).toBe(0);
  });
});

describe('the init container script', () => {
  let server: Server;
  let base = '';
  const hits = new Map<string, number>();
  let dir: string;
  const content = Buffer.from('a tiny model');
  beforeAll(async () => {
    server = createServer((req, res) => {
      hits.set(req.url ?? '', (hits.get(req.url ?? '') ?? 0) + 1);
      if (req.url === '/m.onnx') return void res.writeHead(200).end(content);
      if (req.url === '/big') return void res.writeHead(200).end(Buffer.alloc(5000, 1));
      res.writeHead(404).end();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => new Promise((r) => server.close(r)));
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'mlfaas-model-init-'));
    mkdirSync(join(dir, 'model'));
    mkdirSync(join(dir, 'store'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const run = (env: Record<string, string>) =>
    new Promise<{ code: number; out: string }>((resolve) => {
      execFile('/bin/sh', ['-c', MODEL_FETCH_SCRIPT], {
        timeout: 30_000,
        env: { PATH: process.env.PATH, MODEL_FILE: 'model.onnx', MODEL_MAX_BYTES: '1000', MODEL_TIMEOUT_S: '20', MODEL_DIR: join(dir, 'model'), ...env },
      }, (err, stdout, stderr) => resolve({ code: err ? Number(err.code ?? 1) : 0, out: `${stdout}${stderr}`.trim() }));
    });
  const leftovers = () => readdirSync(join(dir, 'model')).filter((n) => n.startsWith('.tmp-'));

  test('fetches once, verified and read-only; a second pod finds it in the cache', async () => {
    const r = await run({ MODEL_URI: `${base}/m.onnx`, MODEL_SHA256: sha(content) });
    expect(r).toEqual({ code: 0, out: expect.stringMatching(/fetched 12 bytes .* sha256 verified/) });
    expect(readFileSync(join(dir, 'model', 'model.onnx'))).toEqual(content);
    expect(statSync(join(dir, 'model', 'model.onnx')).mode & 0o777).toBe(0o444);
    const old = new Date(Date.now() - 3600_000);
    utimesSync(join(dir, 'model'), old, old);
    expect((await run({ MODEL_URI: `${base}/m.onnx`, MODEL_SHA256: sha(content) })).out).toMatch(/in the node's cache/);
    expect(statSync(join(dir, 'model')).mtimeMs).toBeGreaterThan(old.getTime() + 1000); // a hit is a use: the node agent's LRU sees it
    expect(hits.get('/m.onnx')).toBe(1);
    expect(leftovers()).toEqual([]);
  });

  test('a wrong checksum, an oversized body and a 404 fail with the reason and leave nothing', async () => {
    const wrong = await run({ MODEL_URI: `${base}/m.onnx`, MODEL_SHA256: sha('other') });
    expect(wrong.code).toBe(1);
    expect(wrong.out).toMatch(/m\.onnx: checksum mismatch: mlfaas\.model\.sha256 is [0-9a-f]{64}, the 12 bytes fetched hash to [0-9a-f]{64}/);
    const big = await run({ MODEL_URI: `${base}/big`, MODEL_SHA256: sha('x') });
    expect(big).toEqual({ code: 1, out: expect.stringMatching(/more than 1000 bytes \(the model size limit\)/) });
    const missing = await run({ MODEL_URI: `${base}/nope`, MODEL_SHA256: sha('x') });
    expect(missing).toEqual({ code: 1, out: expect.stringMatching(/cannot fetch it \(wget exit \d+\)/) });
    expect(readdirSync(join(dir, 'model'))).toEqual([]);
  });

  test('file:// reads the store; a link out of it is refused', async () => {
    writeFileSync(join(dir, 'store', 'v1.onnx'), content);
    writeFileSync(join(dir, 'secret'), 'outside');
    symlinkSync(join(dir, 'secret'), join(dir, 'store', 'link.onnx'));
    const store = { STORE_DIR: join(dir, 'store'), MODEL_URI: 'file:///x' };
    expect((await run({ ...store, MODEL_STORE_PATH: 'v1.onnx', MODEL_SHA256: sha(content) })).code).toBe(0);
    rmSync(join(dir, 'model', 'model.onnx'));
    const out = await run({ ...store, MODEL_STORE_PATH: 'link.onnx', MODEL_SHA256: sha('outside') });
    expect(out).toEqual({ code: 1, out: expect.stringMatching(/leads out of the model store/) });
    expect(leftovers()).toEqual([]);
  });
});
