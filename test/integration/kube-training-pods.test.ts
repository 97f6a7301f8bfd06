/**
 * Training jobs as pods: the real digits-train function (ml-training harness, real SGD steps) runs
 * as a pod of the fake cluster (a real process), its checkpoint on a PersistentVolumeClaim; a change of worker count
 * deletes the pod (SIGTERM: the harness checkpoints) and starts the next one, which resumes where
 * the last stopped; the job completes from the pod's phase and its harness lines.
 */
import { CoreV1Api } from '@kubernetes/client-node';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { JobProgress, JobRecord } from '../../gateway/jobs/job-record';
import { buildFunction } from '../../cli/build';
import { readStack } from '../../cli/stack';
import { REPO_ROOT } from '../../gateway/config';
import { kubeConfig } from '../../gateway/providers/kubernetes/kube-config';
import { KubeJob, TRAINING_GRACE_S, trainingPodFor } from '../../gateway/providers/kubernetes/training-pods';
import { ImageStore } from '../../gateway/providers/local/image-store';
import { FakeCluster } from '../helpers/fake-kube/cluster';
import { processRuntime } from '../helpers/fake-kube/process-runtime';
import { FakeKube } from '../helpers/fake-kube/server';
import { eventually } from '../helpers/platform';

const rec = (id: string, epochs: number): JobRecord =>
  ({ id, function: 'digits-train', namespace: 'openfaas-fn', model: 'mlp-wide', epochs, batchSize: 64, learningRate: 0.1,
    checkpointDir: '' }) as unknown as JobRecord;

describe('training jobs as pods', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mlfaas-kube-train-'));
  const kube = new FakeKube({ token: 'tr' });
  let cluster: FakeCluster;
  let core: CoreV1Api;
  let image = '';

  beforeAll(async () => {
    const images = new ImageStore(join(dir, 'images'));
    const stack = readStack(join(REPO_ROOT, 'stack.yml'));
    const fn = stack.functions.find((f) => f.name === 'digits-train')!;
    image = buildFunction(fn, stack.file, join(REPO_ROOT, 'templates'), images).image;
    mkdirSync(join(dir, 'pv'), { recursive: true });
    await kube.start();
    kube.store.create('v1/namespaces', undefined, { metadata: { name: 'openfaas-fn' } }, 'namespaces');
    cluster = new FakeCluster(kube, { readyDelayMs: 20, runtime: processRuntime(kube, images, undefined, { checkpoints: join(dir, 'pv') }) });
    cluster.addNode('train-1', { labels: { 'mlfaas.io/vc': 'training' } });
    cluster.addNode('train-2', { labels: { 'mlfaas.io/vc': 'training' } });
    cluster.start();
    core = kubeConfig({ server: kube.url, token: 'tr', insecure: true }).makeApiClient(CoreV1Api);
  }, 60_000);
  afterAll(async () => {
    await cluster?.stop();
    await kube.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('builds the pod the plan names: node, hyper-parameters, checkpoint claim, grace period', () => {
    const p = trainingPodFor(rec('abc', 5), 4, 'job-abc-1', { namespace: 'openfaas-fn', image: 'x:1', checkpointClaim: 'checkpoints' },
      { node: 'gpu-7', devices: [0, 2] });
    const c = p.spec!.containers[0];
    expect(Object.fromEntries(c.env!.map((e) => [e.name, e.value])))
      .toEqual(expect.objectContaining({ EPOCHS: '5', WORKERS: '4', BATCH_SIZE: '64', LEARNING_RATE: '0.1', CHECKPOINT_DIR: '/var/lib/mlfaas/checkpoints/abc',
        NVIDIA_VISIBLE_DEVICES: '0,2' }));
    expect(p.spec!.terminationGracePeriodSeconds).toBe(15);
    expect(p.spec!.restartPolicy).toBe('Never');
    expect(p.spec!.volumes).toEqual([{ name: 'checkpoints', persistentVolumeClaim: { claimName: 'checkpoints' } }]);
    expect(p.spec!.affinity!.nodeAffinity!.requiredDuringSchedulingIgnoredDuringExecution!.nodeSelectorTerms[0].matchExpressions![0])
      .toEqual({ key: 'kubernetes.io/hostname', operator: 'In', values: ['gpu-7'] });
    expect(c.resources!.limits!['nvidia.com/gpu']).toBe('2');
  });

  it('trains for real, changes its worker count through its checkpoint, and completes', async () => {
    const progress: JobProgress[] = [];
    const logs: string[] = [];
    const job = new KubeJob(kubeConfig({ server: kube.url, token: 'tr', insecure: true }), core, rec('j1', 12), { progress: (p) => progress.push(p),
      log: (t) => logs.push(t) }, {
      namespace: 'openfaas-fn',
      image,
      checkpointClaim: 'checkpoints',
    });
    await job.setWorkers(2, { node: 'train-1', cpus: 2 });
    expect(await eventually(() => (progress[progress.length - 1]?.epoch ?? 0) >= 3, 60_000)).toBe(true);
    const first = kube.store.list('v1/pods', 'openfaas-fn').find((p) => p.metadata.labels?.['mlfaas.io/job'] === 'j1')!;
    expect(first.spec!.nodeName).toBe('train-1');
    const atSwitch = progress[progress.length - 1];
    // the plan changes: 1 worker (the kubelet SIGTERMs the pod; the harness checkpoints within the grace)
    await job.setWorkers(1, { node: 'train-2', cpus: 1 });
    const end = await Promise.race([job.ended, new Promise((r) => setTimeout(() => r('timeout'), 90_000))]);
    expect({ end, logs: end === 'completed' ? [] : logs.slice(-5) }).toEqual({ end: 'completed', logs: [] });
    const pods = kube.requests.filter((r) => r.verb === 'create' && r.resource === '/pods').length;
    expect(pods).toBe(2);
    // the second allocation ran on the other node, holding the one core the plan gave it
    const left = kube.store.list('v1/pods', 'openfaas-fn').filter((p) => p.metadata.labels?.['mlfaas.io/job'] === 'j1');
    expect(left.map((p) => [p.metadata.name, p.spec!.nodeName, p.status!.phase])).toEqual([['job-j1-2', 'train-2', 'Succeeded']]);
    expect((left[0].spec!.containers as Array<{ resources: unknown }>)[0].resources).toEqual({ requests: { cpu: '1' }, limits: { cpu: '1' } });
    expect(kube.requests.some((r) => r.verb === 'delete' && r.resource === '/pods' && r.path.includes(`gracePeriodSeconds=${TRAINING_GRACE_S}`))).toBe(true);
    // the second pod resumed: its first report is not before where the first pod stopped
    const after = progress.slice(progress.indexOf(atSwitch) + 1);
    expect(after.length).toBeGreaterThan(0);
    expect(after[0].epoch).toBeGreaterThanOrEqual(atSwitch.epoch); // ≥ 3: not from scratch
    expect(existsSync(join(dir, 'pv', 'j1'))).toBe(true); // the checkpoint lives on the claim's volume
    expect(progress[progress.length - 1]).toEqual(expect.objectContaining({ epoch: 12, epochs: 12 }));
    expect(progress[progress.length - 1].accuracy).toBeGreaterThan(0.8);
  }, 150_000);

  it('an evicted pod (its node reclaimed) is not a failure: the job waits for its next allocation and resumes from the checkpoint', async () => {
    const progress: JobProgress[] = [];
    const logs: string[] = [];
    const job = new KubeJob(kubeConfig({ server: kube.url, token: 'tr', insecure: true }), core, rec('j2', 10),
      { progress: (p) => progress.push(p), log: (t) => logs.push(t) }, { namespace: 'openfaas-fn', image, checkpointClaim: 'checkpoints' });
    await job.setWorkers(1, { node: 'train-1', cpus: 1 });
    expect(await eventually(() => (progress[progress.length - 1]?.epoch ?? 0) >= 2, 60_000)).toBe(true);
    const name = kube.store.list('v1/pods', 'openfaas-fn').find((p) => p.metadata.labels?.['mlfaas.io/job'] === 'j2')!.metadata.name!;
    await core.createNamespacedPodEviction({ name, namespace: 'openfaas-fn',
      body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name, namespace: 'openfaas-fn' } } });
    expect(await eventually(() => job.workers === 0, 30_000)).toBe(true);
    expect(logs.join('\n')).toMatch(/was evicted or deleted; the next round places the job again/);
    const atEviction = progress[progress.length - 1];
    // the loop's next round: an allocation on the other node
    await job.setWorkers(1, { node: 'train-2', cpus: 1 });
    const end = await Promise.race([job.ended, new Promise((r) => setTimeout(() => r('timeout'), 90_000))]);
    expect(end).toBe('completed');
    const after = progress.slice(progress.indexOf(atEviction) + 1);
    expect(after[0].epoch).toBeGreaterThanOrEqual(atEviction.epoch - 1); // from its checkpoint, not from scratch
    expect(logs.filter((l) => /restarting from the checkpoint|giving up/.test(l))).toEqual([]); // no failure counted
  }, 150_000);
});
