/**
 * GET /system/nodes' Kubernetes half against the fake API server: the nodes' facts from one list,
 * their virtual clusters and the loan of an inference node moved to training by `moveNode`
 * (cordon, evict, relabel, uncordon), through the same `readNodes` the route answers with.
 */
import type { CoreV1Api } from '@kubernetes/client-node';
import { listNodeFacts } from '../../gateway/providers/kubernetes/node-facts';
import { moveNode } from '../../gateway/providers/kubernetes/virtual-clusters';
import { readNodes } from '../../gateway/routes/nodes';
import { type ProviderCluster, startProviderCluster } from '../helpers/fake-kube/provider-cluster';

describe('GET /system/nodes on Kubernetes (fake API server)', () => {
  let k: ProviderCluster;
  let core: CoreV1Api;
  const home = { 'mlfaas.io/vc': 'inference', 'mlfaas.io/home-vc': 'inference' };

  beforeAll(async () => {
    k = await startProviderCluster({ 'gpu-1': { labels: home, gpus: 2 }, 'gpu-2': { labels: home, gpus: 2 },
      'train-1': { labels: { 'mlfaas.io/vc': 'training' }, gpus: 4, cpu: '32' }, plain: {} });
    core = k.core;
  });
  afterAll(() => k?.stop());

  const read = () => readNodes({ provider: () => k.provider.info().provider, enforcement: () => k.provider.enforcement(),
    tokend: () => ({ absent: 'on each node' }), clusters: { source: 'api', nodes: () => listNodeFacts(core) } });

  it('lists every node with its devices and cluster, and the loan after a move', async () => {
    const before = await read();
    expect(before.nodes.map((n) => [n.name, n.virtualCluster ?? '-', n.devices.gpus.length])).toEqual([
      ['gpu-1', 'inference', 2], ['gpu-2', 'inference', 2], ['plain', '-', 0], ['train-1', 'training', 4]]);
    expect(before.nodes.find((n) => n.name === 'train-1')!.devices.cpuCores).toBe(32);
    expect(before.virtualClusters.clusters).toEqual([{ name: 'inference', nodes: ['gpu-1', 'gpu-2'] }, { name: 'training', nodes: ['train-1'] }]);
    expect(before.loans.loans).toEqual([]);
    expect(before.tokend).toMatchObject({ available: false, source: 'on each node' });
    await moveNode(core, 'gpu-2', 'training');
    const after = await read();
    expect(after.loans.loans).toEqual([{ node: 'gpu-2', from: 'inference', to: 'training', moving: false }]);
    expect(after.virtualClusters.clusters).toEqual([{ name: 'inference', nodes: ['gpu-1'] }, { name: 'training', nodes: ['gpu-2', 'train-1'] }]);
  });

  it('an API server that does not answer: the reason, within the bound', async () => {
    const a = await readNodes({ provider: () => 'p', enforcement: () => k.provider.enforcement(), tokend: () => ({ absent: 'x' }),
      clusters: { source: 'api', nodes: () => new Promise(() => undefined) }, timeoutMs: 200 });
    expect(a.virtualClusters).toEqual({ source: 'api: no answer in 200 ms', clusters: [] });
    expect(a.nodes).toEqual([]);
  });
});
