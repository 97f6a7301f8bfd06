/**
 * The gateway with MLFAAS_PROVIDER=kubernetes, for real over HTTP: faas-cli's deploy body becomes
 * a Deployment in the (fake) cluster, whose kubelets run the pods as processes; invocations go
 * through the gateway to the pods; two gateways on one Redis serve the same cluster.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ImageStore } from '../../gateway/providers/local/image-store';
import { FakeCluster } from '../helpers/fake-kube/cluster';
import { processRuntime } from '../helpers/fake-kube/process-runtime';
import { FakeKube } from '../helpers/fake-kube/server';
import { aFunction } from '../helpers/fixtures';
import { seedEchoHttp } from '../helpers/images';
import { eventually, testGateway, testRedis, type TestPlatform } from '../helpers/platform';

describe('gateway on the kubernetes provider', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mlfaas-gw-k8s-'));
  const kube = new FakeKube({ token: 'gw' });
  let cluster: FakeCluster;
  let redis: Awaited<ReturnType<typeof testRedis>>;
  let a: TestPlatform;
  let b: TestPlatform;

  beforeAll(async () => {
    const images = new ImageStore(join(dir, 'images'));
    seedEchoHttp(images);
    await kube.start();
    kube.store.create('v1/namespaces', undefined, { metadata: { name: 'openfaas-fn', annotations: { openfaas: '1' } } }, 'namespaces');
    cluster = new FakeCluster(kube, { readyDelayMs: 100, runtime: processRuntime(kube, images) });
    cluster.addNode('node-a');
    cluster.start();
    redis = await testRedis();
    const env = { MLFAAS_PROVIDER: 'kubernetes', MLFAAS_KUBE_SERVER: kube.url, MLFAAS_KUBE_TOKEN: 'gw', MLFAAS_KUBE_INSECURE: '1',
      MLFAAS_KUBE_IMAGE_CHECK: 'off', MLFAAS_BASIC_AUTH: 'false', MLFAAS_AUTOSCALER: 'false' };
    a = await testGateway(redis.url, env);
    b = await testGateway(redis.url, env);
  });
  afterAll(async () => {
    await b?.stop();
    await a?.stop();
    await redis?.stop();
    await cluster?.stop();
    await kube.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('deploys through one gateway and invokes through the other', async () => {
    const res = await a.json('POST', '/system/functions', aFunction('hello').minScale(1).env('GREETING', 'k8s').build());
    expect(res.status).toBe(202);
    expect(kube.store.get('apps/v1/deployments', 'openfaas-fn', 'hello')).toBeDefined();
    const out = await eventually(async () => {
      const r = await b.get('/function/hello', { method: 'POST', body: 'hi' });
      return r.status === 200 ? ((await r.json()) as { env: string; body: string; replica: string }) : undefined;
    }, 20000);
    expect(out).toEqual(expect.objectContaining({ env: 'k8s', body: 'hi', replica: expect.stringMatching(/^hello-/) }));
    const listed = (await (await b.get('/system/functions')).json()) as Array<{ name: string; availableReplicas: number }>;
    expect(listed).toEqual([expect.objectContaining({ name: 'hello', availableReplicas: 1 })]);
  });

  it('scales through the API into the Deployment', async () => {
    expect((await a.json('POST', '/system/scale-function/hello', { serviceName: 'hello', replicas: 2 })).status).toBe(202);
    expect(await eventually(() => kube.store.get('apps/v1/deployments', 'openfaas-fn', 'hello')?.spec?.replicas === 2, 5000)).toBe(true);
  });

  it('says what it enforces in /system/info', async () => {
    const info = (await (await a.get('/system/info')).json()) as { provider: { provider: string; orchestration: string };
      mlfaas: { enforcement: { summary: string } }; };
    expect(info.provider).toEqual(expect.objectContaining({ provider: 'mlfaas-kubernetes', orchestration: 'kubernetes' }));
    expect(info.mlfaas.enforcement.summary).toMatch(/kubelet/);
  });

  it('removes the Deployment and Service on delete', async () => {
    expect((await a.json('DELETE', '/system/functions', { functionName: 'hello' })).status).toBe(202);
    expect(kube.store.get('apps/v1/deployments', 'openfaas-fn', 'hello')).toBeUndefined();
    expect(kube.store.get('v1/services', 'openfaas-fn', 'hello')).toBeUndefined();
  });
});
