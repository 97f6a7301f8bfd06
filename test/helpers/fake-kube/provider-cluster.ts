/** A fake API server with a simulated cluster of `nodes`, the `openfaas-fn` namespace, and a started Kubernetes provider on it. */
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { kubeConfig } from '../../../gateway/providers/kubernetes/kube-config';
import { KubernetesProvider, type KubernetesProviderOptions } from '../../../gateway/providers/kubernetes/kubernetes-provider';
import { type ClusterOptions, FakeCluster } from './cluster';
import { FakeKube } from './server';

export type NodeSpec = Parameters<FakeCluster['addNode']>[1];

export interface ProviderCluster {
  kube: FakeKube;
  cluster: FakeCluster;
  provider: KubernetesProvider;
  kc: KubeConfig;
  core: CoreV1Api;
  stop(): Promise<void>;
}

export async function startProviderCluster(nodes: Record<string, NodeSpec>,
  o: { token?: string; cluster?: ClusterOptions; provider?: Partial<KubernetesProviderOptions> } = {}): Promise<ProviderCluster> {
  const token = o.token ?? 'pc';
  const kube = new FakeKube({ token });
  await kube.start();
  kube.store.create('v1/namespaces', undefined, { metadata: { name: 'openfaas-fn', annotations: { openfaas: '1' } } }, 'namespaces');
  const cluster = new FakeCluster(kube, { readyDelayMs: 20, ...o.cluster });
  for (const [name, spec] of Object.entries(nodes)) cluster.addNode(name, spec);
  cluster.start();
  const kc = kubeConfig({ server: kube.url, token, insecure: true });
  const provider = new KubernetesProvider(kc, { version: { release: 't', sha: 't' }, ...o.provider });
  await provider.start();
  return {
    kube,
    cluster,
    provider,
    kc,
    core: kc.makeApiClient(CoreV1Api),
    async stop() {
      await provider.close();
      await cluster.stop();
      await kube.stop();
    },
  };
}
