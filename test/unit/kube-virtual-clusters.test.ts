/**
 * FaPES' loan and reclaim on Kubernetes: a node moves between the inference and training virtual
 * clusters by cordon, eviction, relabel and uncordon; the evicted GPU function's pod is recreated
 * on a node still in the inference cluster (its node affinity), never on the loaned one.
 */
import { CoreV1Api } from '@kubernetes/client-node';
import { kubeConfig } from '../../gateway/providers/kubernetes/kube-config';
import { KubernetesProvider } from '../../gateway/providers/kubernetes/kubernetes-provider';
import { moveNode, virtualClusters } from '../../gateway/providers/kubernetes/virtual-clusters';
import { parseDeployment } from '../../gateway/registry/function-spec';
import { FakeCluster } from '../helpers/fake-kube/cluster';
import { FakeKube } from '../helpers/fake-kube/server';
import { aFunction } from '../helpers/fixtures';
import { eventually } from '../helpers/platform';

describe('virtual clusters as node labels', () => {
  const kube = new FakeKube({ token: 'vc' });
  let cluster: FakeCluster;
  let provider: KubernetesProvider;
  let core: CoreV1Api;
  const ref = { name: 'g', namespace: 'openfaas-fn' };

  beforeAll(async () => {
    await kube.start();
    kube.store.create('v1/namespaces', undefined, { metadata: { name: 'openfaas-fn', annotations: { openfaas: '1' } } }, 'namespaces');
    cluster = new FakeCluster(kube, { readyDelayMs: 20 });
    for (const [name, vc] of [['gpu-1', 'inference'], ['gpu-2', 'inference'], ['gpu-3', 'training']] as const) cluster.addNode(name, { labels: { 'mlfaas.io/vc': vc }, gpus: 1 });
    cluster.start();
    const kc = kubeConfig({ server: kube.url, token: 'vc', insecure: true });
    provider = new KubernetesProvider(kc, { version: { release: 't', sha: 't' } });
    await provider.start();
    core = kc.makeApiClient(CoreV1Api);
  });
  afterAll(async () => {
    await provider.close();
    await cluster.stop();
    await kube.stop();
  });

  it('keeps GPU functions on inference nodes', async () => {
    await provider.deploy(parseDeployment(aFunction('g').minScale(1).label('mlfaas.gpu', '1').build()));
    const r = await eventually(async () => (await provider.endpoints(ref)).find((x) => x.state === 'ready'), 5000);
    expect(['gpu-1', 'gpu-2']).toContain(r!.agent);
    expect(await virtualClusters(core)).toEqual({ inference: ['gpu-1', 'gpu-2'], training: ['gpu-3'] });
  });

  it('loans the node a replica runs on: evicted, recreated on the other inference node', async () => {
    const [r] = await provider.endpoints(ref);
    const other = r.agent === 'gpu-1' ? 'gpu-2' : 'gpu-1';
    const report = await moveNode(core, r.agent, 'training');
    expect(report).toEqual({ node: r.agent, from: 'inference', to: 'training', evicted: [`openfaas-fn/${r.id}`] });
    const moved = await eventually(async () => (await provider.endpoints(ref)).find((x) => x.state === 'ready' && x.agent === other), 5000);
    expect(moved).toBeDefined();
    expect(await virtualClusters(core)).toEqual({ inference: [other], training: [r.agent, 'gpu-3'].sort() });
    const node = kube.store.get('v1/nodes', undefined, r.agent)!;
    expect(node.spec!.unschedulable).toBe(false);
    expect(kube.requests.filter((q) => q.resource === '/pods/eviction').map((q) => q.verb)).toEqual(['create']);
  });

  it('with no inference node left, the replica waits Pending with the scheduler\'s reason; a reclaim brings it back', async () => {
    const [r] = await provider.endpoints(ref);
    await moveNode(core, r.agent, 'training');
    const why = await eventually(async () => (await provider.endpoints(ref)).find((x) => x.state === 'starting')?.lastError, 5000);
    expect(why).toMatch(/didn't match Pod's node affinity/);
    await moveNode(core, 'gpu-3', 'inference');
    const back = await eventually(async () => (await provider.endpoints(ref)).find((x) => x.state === 'ready' && x.agent === 'gpu-3'), 5000);
    expect(back).toBeDefined();
  });
});
