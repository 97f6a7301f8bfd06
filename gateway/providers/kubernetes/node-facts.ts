/**
 * The cluster's nodes as `GET /system/nodes` shows them (issue 26): each node's CPU and GPUs, its
 * virtual cluster (`mlfaas.io/vc`) and home cluster (`mlfaas.io/home-vc`: a node whose two labels
 * differ is on loan), and whether it is cordoned. One list call; the view is built by the pure
 * `routes/nodes-model.ts`.
 */
import type { CoreV1Api, V1Node } from '@kubernetes/client-node';
import { cpuCores } from '../../../node-runtime/cgroups';
import type { ClusterNodeFacts } from '../../routes/nodes-model';
import { VC_LABEL } from './manifests';
import { HOME_VC_LABEL } from './vc-manager';

/** One node's facts (pure). */
export function nodeFacts(n: V1Node): ClusterNodeFacts {
  const labels = n.metadata?.labels ?? {};
  const alloc = n.status?.allocatable ?? {};
  return {
    name: n.metadata?.name ?? '',
    ...(labels[VC_LABEL] ? { vc: labels[VC_LABEL] } : {}),
    ...(labels[HOME_VC_LABEL] ? { homeVc: labels[HOME_VC_LABEL] } : {}),
    cpuCores: cpuCores(String(alloc.cpu ?? '0')),
    gpus: Number(alloc['nvidia.com/gpu'] ?? 0) || 0,
    unschedulable: !!n.spec?.unschedulable,
  };
}

/** Every node of the cluster, read now. */
export async function listNodeFacts(core: CoreV1Api): Promise<ClusterNodeFacts[]> {
  return (await core.listNode({})).items.map(nodeFacts);
}
