/**
 * FaPES' loan and reclaim on Kubernetes: a node moves between the inference and training virtual
 * clusters by cordon, eviction, relabel and uncordon; the evicted GPU function's pod is recreated
 * on a node still in the inference cluster (its node affinity), never on the loaned one.
 */
import type { CoreV1Api } from '@kubernetes/client-node';
import type { KubernetesProvider } from '../../gateway/providers/kubernetes/kubernetes-provider';
import { moveNode, virtualClusters } from '../../gateway/providers/kubernetes/virtual-clusters';
import { parseDeployment } from '../../gateway/registry/function-spec';
import { type ProviderCluster, startProviderCluster } from '../helpers/fake-kube/provider-cluster';
import { aFunction } from '../helpers/fixtures';
import { eventually } from '../helpers/platform';

describe('virtual clusters as node labels', () => {
  let k: ProviderCluster;
  let provider: KubernetesProvider;
  let core: CoreV1Api;
  const ref = { name: 'g', namespace: 'openfaas-fn' };

  beforeAll(async () => {
    k = await startProviderCluster(Object.fromEntries((['inference', 'inference', 'training'] as const).map((vc, i) =>
      [`gpu-${i + 1}`, { labels: { 'mlfaas.io/vc': vc }, gpus: 1 }])));
    ({ provider, core } = k);
  });
  afterAll(() => k?.stop());

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
    const node = k.kube.store.get('v1/nodes', undefined, r.agent)!;
    expect(node.spec!.unschedulable).toBe(false);
    expect(k.kube.requests.filter((q) => q.resource === '/pods/eviction').map((q) => q.verb)).toEqual(['create']);
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
