/**
 * The Kubernetes provider passes the same FunctionProvider contract as the local one, against the
 * fake API server (test/helpers/fake-kube) whose kubelets run the pods as real processes.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ImageStore } from '../../gateway/providers/local/image-store';
import { cpuCores } from '../../node-runtime/cgroups';
import { kubeConfig } from '../../gateway/providers/kubernetes/kube-config';
import { KubernetesProvider } from '../../gateway/providers/kubernetes/kubernetes-provider';
import { FakeCluster } from '../helpers/fake-kube/cluster';
import { processRuntime } from '../helpers/fake-kube/process-runtime';
import { FakeKube } from '../helpers/fake-kube/server';
import { seedEchoHttp } from '../helpers/images';
import { describeProvider } from './describe-provider';

describeProvider('kubernetes', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'mlfaas-k8s-contract-'));
  const images = new ImageStore(join(dir, 'images'));
  seedEchoHttp(images);
  const kube = new FakeKube({ token: 'contract' });
  await kube.start();
  kube.store.create('v1/namespaces', undefined, { metadata: { name: 'openfaas-fn', annotations: { openfaas: '1' } } }, 'namespaces');
  const cluster = new FakeCluster(kube, { readyDelayMs: 100, runtime: processRuntime(kube, images) });
  cluster.addNode('node-a');
  cluster.addNode('node-b');
  cluster.start();
  const provider = new KubernetesProvider(kubeConfig({ server: kube.url, token: 'contract', insecure: true }), {
    version: { release: 'test', sha: 'test' },
    images: async (image) => {
      const m = images.find(image);
      return m ? { kind: m.kind } : undefined;
    },
  });
  await provider.start();
  return {
    provider,
    // what the fake kubelet reports it applied to the pod's container (its status, as a kubelet
    // reports an in-place resize), not the spec the provider asked for
    async enforcedCpu(ref, replicaId) {
      const pod = kube.store.get('v1/pods', ref.namespace,
        replicaId) as { status?: { containerStatuses?: Array<{ resources?: { limits?: { cpu?: string } } }> } } | undefined;
      const statuses = pod?.status?.containerStatuses;
      if (!statuses?.length) return undefined;
      const cpu = statuses[0].resources?.limits?.cpu;
      return cpu ? cpuCores(cpu) : Infinity;
    },
    async stop() {
      await provider.close();
      await cluster.stop();
      await kube.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});
