/**
 * Training on Kubernetes end to end, for real over HTTP: the gateway (MLFAAS_PROVIDER=kubernetes)
 * asks the image's registry what kind of function it deploys, admits a job after profiling it as
 * two pods on a training node, and the `mlfaas autoscaler` process (a real child process) runs the
 * training round loop: the job runs as a pod on the node and cores the plan names, its
 * checkpoint on the claim, and completes. The cluster is the fake API server with kubelets that
 * run pods as processes; the registry is test/helpers/fake-registry.ts.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildFunction } from '../../cli/build';
import { readStack } from '../../cli/stack';
import { REPO_ROOT } from '../../gateway/config';
import { ImageStore } from '../../gateway/providers/local/image-store';
import { KIND_LABEL } from '../../gateway/providers/kubernetes/registry-images';
import { FakeCluster } from '../helpers/fake-kube/cluster';
import { processRuntime } from '../helpers/fake-kube/process-runtime';
import { FakeKube } from '../helpers/fake-kube/server';
import { FakeRegistry, pushImage } from '../helpers/fake-registry';
import { aFunction } from '../helpers/fixtures';
import { eventually, TEST_ENV, testGateway, testRedis, type TestPlatform } from '../helpers/platform';

const BIN = join(__dirname, '../../bin/mlfaas');
type Pod = { metadata: { name: string; labels?: Record<string, string> };
  spec: { nodeName?: string; containers: Array<{ resources?: unknown; env?: Array<{ name: string; value?: string }> }> }; status?: { phase?: string }; };

describe('training on Kubernetes: admission with profile pods, the round loop in the autoscaler process, jobs as pods', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mlfaas-kube-train-e2e-'));
  const kube = new FakeKube({ token: 'e2e' });
  const reg = new FakeRegistry();
  let cluster: FakeCluster;
  let redis: Awaited<ReturnType<typeof testRedis>>;
  let gw: TestPlatform;
  let scaler: ChildProcess | undefined;
  let scalerLog = '';
  let image = '';
  let env: Record<string, string> = {};
  const pods = () => kube.store.list('v1/pods', 'openfaas-fn') as unknown as Pod[];

  beforeAll(async () => {
    await reg.start();
    const images = new ImageStore(join(dir, 'images'));
    const stack = readStack(join(REPO_ROOT, 'stack.yml'));
    const fn = stack.functions.find((f) => f.name === 'digits-train')!;
    image = `${reg.host}/mlfaas/digits-train:0.1.0`;
    buildFunction({ ...fn, image }, stack.file, join(REPO_ROOT, 'templates'), images);
    await pushImage(reg.url, 'mlfaas/digits-train', '0.1.0', { [KIND_LABEL]: 'training' }); // what the template's Dockerfile labels
    mkdirSync(join(dir, 'pv'), { recursive: true });
    await kube.start();
    kube.store.create('v1/namespaces', undefined, { metadata: { name: 'openfaas-fn', annotations: { openfaas: '1' } } }, 'namespaces');
    cluster = new FakeCluster(kube, { readyDelayMs: 20, runtime: processRuntime(kube, images, undefined, { 'mlfaas-checkpoints': join(dir, 'pv') }) });
    cluster.addNode('infer-1', { labels: { 'mlfaas.io/vc': 'inference' } });
    cluster.addNode('train-1', { labels: { 'mlfaas.io/vc': 'training' }, cpu: '2' });
    cluster.addNode('train-2', { labels: { 'mlfaas.io/vc': 'training' }, cpu: '2' });
    cluster.start();
    redis = await testRedis();
    env = {
      MLFAAS_PROVIDER: 'kubernetes',
      MLFAAS_KUBE_SERVER: kube.url,
      MLFAAS_KUBE_TOKEN: 'e2e',
      MLFAAS_KUBE_INSECURE: '1',
      MLFAAS_KUBE_INSECURE_REGISTRIES: reg.host,
      MLFAAS_BASIC_AUTH: 'false',
      MLFAAS_AUTOSCALER: 'false',
      MLFAAS_TRAINING_SLOTS: '4',
      MLFAAS_TRAINING_SLOT_S: '2',
    };
    gw = await testGateway(redis.url, env);
  }, 60_000);
  afterAll(async () => {
    scaler?.kill('SIGKILL');
    await gw?.stop();
    await redis?.stop();
    await cluster?.stop();
    await kube.stop();
    await reg.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('deploys a training function by its image label, and refuses an image its registry does not have', async () => {
    const res = await gw.json('POST', '/system/functions', aFunction('digits-train').image(image).annotation('mlfaas.model', 'mlp')
      .annotation('mlfaas.dataset', 'data/digits.csv').build());
    expect(res.status).toBe(202);
    const dep = kube.store.get('apps/v1/deployments', 'openfaas-fn', 'digits-train')!;
    expect(dep.metadata.annotations?.['mlfaas.io/kind']).toBe('training');
    expect(dep.spec?.replicas).toBe(0); // a training function has no replicas: its jobs are pods
    const missing = await gw.json('POST', '/system/functions', aFunction('ghost').image(`${reg.host}/mlfaas/ghost:1`).build());
    expect(missing.status).toBe(400);
    expect(((await missing.json()) as { error: { field: string; message: string } }).error)
      .toEqual(expect.objectContaining({ field: 'image', message: expect.stringContaining('not in the cluster') }));
    expect(kube.store.get('apps/v1/deployments', 'openfaas-fn', 'ghost')).toBeUndefined();
  });

  it('profiles the model as pods on a training node and admits the job with a plan on the cluster', async () => {
    const res = await gw.json('POST', '/system/jobs', { function: 'digits-train', length: 8, batch_size: 64, max_workers: 2 });
    const body = (await res.json()) as { id: string; plan: { workersPerRound: number[] }; job: { maxWorkers: number; curve: { gpus: number[] } } };
    expect({ status: res.status, body }).toEqual(expect.objectContaining({ status: 201 }));
    expect(body.job.maxWorkers).toBe(2); // at most one node's slots (train nodes have 2 cores)
    const profiles = kube.requests.filter((r) => r.verb === 'create' && r.resource === '/pods' && r.status === 201);
    expect(profiles.length).toBeGreaterThanOrEqual(2);
    // each profile run was a pod on a training node, at its worker count in cores, deleted when done
    const created = kube.requests.filter((r) => r.verb === 'delete' && r.resource === '/pods' && r.path.includes('/profile-digits-train-'));
    expect(created.length).toBe(2);
    expect(pods().filter((p) => p.metadata.labels?.['mlfaas.io/profile'])).toEqual([]);
    (globalThis as { jobId?: string }).jobId = body.id;
  }, 120_000);

  it('runs the job in the autoscaler process as a pod on the node the plan names, and completes it', async () => {
    const id = (globalThis as { jobId?: string }).jobId!;
    scaler = spawn(process.execPath, [BIN, 'autoscaler', '--redis-url', redis.url],
      { env: { ...process.env, ...TEST_ENV, ...env, MLFAAS_DATA_DIR: dir, POD_NAMESPACE: 'mlfaas' }, stdio: ['ignore', 'pipe', 'pipe'] });
    scaler.stdout!.on('data', (b: Buffer) => (scalerLog += b.toString()));
    scaler.stderr!.on('data', (b: Buffer) => (scalerLog += b.toString()));
    const job = async () =>
      (await (await gw.get(`/system/jobs/${id}`)).json()) as { state: string; allocations: Array<{ workers: number }>;
        progress?: { epoch: number; accuracy?: number }; };
    const done = await eventually(async () => ((await job()).state === 'completed' ? job() : undefined), 120_000);
    expect({ done: done?.state, log: done ? '' : scalerLog.slice(-2000) }).toEqual({ done: 'completed', log: '' });
    expect(scalerLog).toMatch(/training round loop: policy mlfaas/);
    const jobPods = pods().filter((p) => p.metadata.labels?.['mlfaas.io/job'] === id);
    expect(jobPods.length).toBeGreaterThanOrEqual(1);
    const last = jobPods[jobPods.length - 1];
    expect(['train-1', 'train-2']).toContain(last.spec.nodeName);
    expect(last.status?.phase).toBe('Succeeded');
    const workers = done!.allocations.filter((a) => a.workers > 0).pop()!.workers;
    expect(last.spec.containers[0].resources).toEqual({ requests: { cpu: String(workers) }, limits: { cpu: String(workers) } });
    expect(Object.fromEntries(last.spec.containers[0].env!.map((e) => [e.name, e.value])))
      .toEqual(expect.objectContaining({ WORKERS: String(workers), DATASET: 'data/digits.csv', MODEL: 'mlp',
        CHECKPOINT_DIR: `/var/lib/mlfaas/checkpoints/${id}` }));
    expect(readdirSync(join(dir, 'pv'))).toContain(id); // the checkpoint is on the claim's volume
    expect(done!.progress).toEqual(expect.objectContaining({ epoch: 8 }));
    // the job's event stream (SSE) ends after its final state
    const sse = await (await gw.get(`/system/jobs/${id}/events`)).text();
    const events = sse.split('\n').filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6)) as { type: string; data: { node?: string } });
    expect(events.filter((e) => e.type === 'allocation').map((e) => e.data.node)).toContain(last.spec.nodeName);
  }, 150_000);
});
