/**
 * Virtual clusters on Kubernetes (FaPES): each node belongs to `inference` or `training` by its
 * label `mlfaas.io/vc`. Moving a node (a loan to training, a reclaim for inference) is: cordon it,
 * evict the pods of the other cluster on it through the eviction subresource (their controllers
 * recreate them elsewhere; training workers checkpoint in their preStop grace period), relabel
 * it, uncordon it. The function pods keep to their cluster by node affinity on the label.
 */
import type { CoreV1Api, V1Node } from '@kubernetes/client-node';
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { FN_LABEL, VC_LABEL } from './manifests';
import { JOB_LABEL } from './training-pods';

export type VirtualCluster = 'inference' | 'training';
const MERGE = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

export interface MoveReport {
  node: string;
  from: VirtualCluster | undefined;
  to: VirtualCluster;
  evicted: string[];
}

/** The nodes of each virtual cluster (a node without the label is in neither). */
export async function virtualClusters(core: CoreV1Api): Promise<Record<VirtualCluster, string[]>> {
  const nodes = (await core.listNode({ labelSelector: VC_LABEL })).items;
  const of = (vc: VirtualCluster) => nodes.filter((n: V1Node) => n.metadata?.labels?.[VC_LABEL] === vc).map((n) => n.metadata!.name!).sort();
  return { inference: of('inference'), training: of('training') };
}

/**
 * Moves `node` into `to`: cordon, evict the other cluster's mlfaas pods on it (function replicas
 * when it goes to training, training jobs' pods when it comes back to inference), relabel, uncordon.
 */
export async function moveNode(core: CoreV1Api, node: string, to: VirtualCluster): Promise<MoveReport> {
  const n = await core.readNode({ name: node });
  const from = n.metadata?.labels?.[VC_LABEL] as VirtualCluster | undefined;
  await core.patchNode({ name: node, body: { spec: { unschedulable: true } } }, MERGE);
  const pods = (await core.listPodForAllNamespaces({ labelSelector: to === 'training' ? FN_LABEL : JOB_LABEL,
    fieldSelector: `spec.nodeName=${node}` })).items.filter(
    (p) => p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed',
  );
  const evicted: string[] = [];
  for (const p of pods) {
    const name = p.metadata!.name!;
    const namespace = p.metadata!.namespace!;
    await core.createNamespacedPodEviction({ name, namespace,
      body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name, namespace } } }).catch((e: { code?: number }) => {
      if (e.code !== 404) throw e; // gone already
    });
    evicted.push(`${namespace}/${name}`);
  }
  await core.patchNode({ name: node, body: { metadata: { labels: { [VC_LABEL]: to } }, spec: { unschedulable: false } } }, MERGE);
  return { node, from, to, evicted };
}
