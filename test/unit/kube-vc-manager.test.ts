/**
 * FaPES-Manager on Kubernetes, round by round against the fake cluster: an idle inference node
 * (labelled home-vc=inference) is loaned to training without evicting a replica; when the
 * autoscaler's replicas need it back it is reclaimed, the training pod on it is evicted, and the
 * replica that waited Pending is scheduled there.
 */
import type { CoreV1Api, V1Node, V1Pod } from '@kubernetes/client-node';
import type { KubernetesProvider } from '../../gateway/providers/kubernetes/kubernetes-provider';
import { inferenceDemand, manageVirtualClusters } from '../../gateway/providers/kubernetes/vc-manager';
import { manageLoans } from '../../autoscaler/training/fapes/manager';
import { parseDeployment } from '../../gateway/registry/function-spec';
import { type ProviderCluster, startProviderCluster } from '../helpers/fake-kube/provider-cluster';
import { aFunction } from '../helpers/fixtures';
import { eventually } from '../helpers/platform';

const pod = (cpu: string, o: { gpu?: number; phase?: string } = {}): V1Pod => ({
  metadata: { labels: { faas_function: 'f' } },
  spec: { containers: [{ name: 'c', resources: { requests: { cpu }, limits: o.gpu ? { 'nvidia.com/gpu': String(o.gpu) } : {} } }] },
  status: { phase: o.phase ?? 'Running' },
});
const node = (cpu: string, gpus = 0): V1Node =>
  ({ metadata: { name: 'n' }, status: { allocatable: { cpu, ...(gpus ? { 'nvidia.com/gpu': String(gpus) } : {}) } } });

describe('inference demand in nodes', () => {
  it('is the function pods\' requests over one node, CPU or GPU, at least 1 while any is wanted, at most the cluster', () => {
    expect(inferenceDemand([pod('1'), pod('1'), pod('1')], [node('2'), node('2')])).toBe(2);
    expect(inferenceDemand([pod('500m')], [node('4'), node('4')])).toBe(1);
    expect(inferenceDemand([pod('100m', { gpu: 1 }), pod('100m', { gpu: 1 }), pod('100m', { gpu: 1 })], [node('32', 2), node('32', 2)])).toBe(2);
    expect(inferenceDemand([pod('8'), pod('8'), pod('8')], [node('4'), node('4')])).toBe(2);
    expect(inferenceDemand([pod('1', { phase: 'Succeeded' })], [node('2')])).toBe(0);
    expect(inferenceDemand([], [node('2')])).toBe(0);
  });
});

describe('loan and reclaim of nodes, live', () => {
  let k: ProviderCluster;
  let provider: KubernetesProvider;
  let core: CoreV1Api;
  const ref = { name: 'f', namespace: 'openfaas-fn' };
  const vc = (n: string) => k.kube.store.get('v1/nodes', undefined, n)!.metadata.labels!['mlfaas.io/vc'];
  const running = () => k.kube.store.list('v1/pods', 'openfaas-fn').filter((p) => p.metadata.labels?.faas_function === 'f' && p.status?.phase === 'Running');

  beforeAll(async () => {
    const home = { 'mlfaas.io/vc': 'inference', 'mlfaas.io/home-vc': 'inference' };
    k = await startProviderCluster({ 'inf-1': { labels: home, cpu: '2' }, 'inf-2': { labels: home, cpu: '2' },
      'train-1': { labels: { 'mlfaas.io/vc': 'training' }, cpu: '2' } });
    ({ provider, core } = k);
  });
  afterAll(() => k?.stop());

  it('loans the idle inference node, not the one a replica runs on', async () => {
    await provider.deploy(parseDeployment({ ...aFunction('f').minScale(1).maxScale(4).build(), requests: { cpu: '1' }, limits: { cpu: '1' } }));
    const r = await eventually(async () => (await provider.endpoints(ref)).find((x) => x.state === 'ready'), 5000);
    const busy = r!.agent;
    const idle = busy === 'inf-1' ? 'inf-2' : 'inf-1';
    const round = await manageVirtualClusters(core, manageLoans);
    expect(round!.demand).toBe(1);
    expect(round!.moves).toEqual([{ node: idle, from: 'inference', to: 'training', evicted: [] }]);
    expect([vc(idle), vc(busy)]).toEqual(['training', 'inference']);
    expect((await manageVirtualClusters(core, manageLoans))!.moves).toEqual([]); // steady: nothing moves
    // a training job's pod runs on the loaned node
    await core.createNamespacedPod({ namespace: 'openfaas-fn',
      body: { metadata: { name: 'job-j1-1', labels: { 'mlfaas.io/job': 'j1' } },
        spec: {
          affinity: {
            nodeAffinity: {
              requiredDuringSchedulingIgnoredDuringExecution: {
                nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [idle] }] }],
              },
            },
          },
          containers: [{ name: 'train', image: 'x' }],
        } } });
    expect(await eventually(() => k.kube.store.get('v1/pods', 'openfaas-fn', 'job-j1-1')?.status?.phase === 'Running', 5000)).toBe(true);
  });

  it('reclaims it when replicas need it: the training pod is evicted and the Pending replica lands there', async () => {
    const idle = ['inf-1', 'inf-2'].find((n) => vc(n) === 'training')!;
    await provider.scale(ref, 3);
    // two replicas fit on the inference node; the third waits (replicas keep off training nodes)
    expect(await eventually(() => running().length === 2, 5000)).toBe(true);
    const pending = await eventually(() => k.kube.store.list('v1/pods', 'openfaas-fn')
      .find((p) => p.metadata.labels?.faas_function === 'f' && p.status?.phase === 'Pending'), 5000);
    expect(pending).toBeDefined();
    const round = await manageVirtualClusters(core, manageLoans);
    expect(round!.demand).toBe(2);
    expect(round!.decision.preempted).toEqual(['j1']);
    expect(round!.moves).toEqual([{ node: idle, from: 'training', to: 'inference', evicted: ['openfaas-fn/job-j1-1'] }]);
    expect(vc(idle)).toBe('inference');
    expect(await eventually(() => !k.kube.store.get('v1/pods', 'openfaas-fn', 'job-j1-1'), 5000)).toBe(true);
    expect(await eventually(() => running().length === 3 && running().some((p) => p.spec!.nodeName === idle), 5000)).toBe(true);
  });
});
