/**
 * The fixed-cluster placement on Kubernetes (issue 24): inference pods are created behind the
 * scheduling gate `mlfaas.io/placement` (manifests.ts), so the scheduler leaves them Pending. Each
 * round this reads the gated pods, the nodes and the pods already placed, asks the placement
 * (a port: the autoscaler's policy, never imported here) for a node and GPU, and opens the gate
 * with one JSON patch: the node into the pod's nodeSelector (`kubernetes.io/hostname`, an addition
 * the API allows while a pod is gated), the GPU into `mlfaas.io/gpu-device` (the node agent applies
 * the pod's quota on that GPU's tokend window, and the container's CUDA_VISIBLE_DEVICES reads it),
 * why into `mlfaas.io/placed`, and the gate removed. The scheduler then binds the pod to that node.
 */
import { CoreV1Api, type KubeConfig, PatchStrategy, setHeaderOptions, type V1Node, type V1Pod } from '@kubernetes/client-node';
import { cpuCores } from '../../../node-runtime/cgroups';
import { CPU_BASE_ANNOTATION, FN_LABEL, GPU_DEVICE_ANNOTATION, GPU_SHARE_ANNOTATION, PLACED_ANNOTATION, PLACEMENT_GATE } from './manifests';
import { QUOTA_ANNOTATION } from './pods';

const JSON_PATCH = setHeaderOptions('Content-Type', PatchStrategy.JsonPatch);
const HOSTNAME = 'kubernetes.io/hostname';

/** A pod as the placement sees it: what it needs. */
export interface PodNeed {
  namespace: string;
  name: string;
  fn: string;
  /** CPU cores it may use: its quota × its CPU limit (or × 1 core without one). */
  cores: number;
  /** A fractional GPU's share in (0, 1); undefined: none. */
  gpuShare?: number;
  /** Whole GPUs (nvidia.com/gpu); the device plugin picks which. */
  wholeGpus: number;
}

/** A node with what is placed on it. */
export interface NodeView {
  name: string;
  cpus: number;
  gpus: number;
  /** Pods bound to it (or placed on it this round), with the GPU each fractional one uses. */
  pods: Array<PodNeed & { gpu?: number }>;
}

export type Placement = { node: string; gpu?: number; why: string } | { wait: string };

/** The placement policy: a node and GPU among `nodes` (already filtered to those the pod may run on), or why it waits. */
export type PlaceFn = (pod: PodNeed, nodes: readonly NodeView[]) => Placement;

export interface Released {
  pod: string;
  node?: string;
  gpu?: number;
  why: string;
}

const num = (x: string | undefined, def: number) => (x !== undefined && Number.isFinite(Number(x)) ? Number(x) : def);

/** What a pod needs, from its annotations and resources. */
export function needOf(p: V1Pod): PodNeed {
  const a = p.metadata?.annotations ?? {};
  const limits = (p.spec?.containers?.[0]?.resources?.limits ?? {}) as Record<string, string>;
  const base = a[CPU_BASE_ANNOTATION] ?? limits.cpu;
  const share = a[GPU_SHARE_ANNOTATION] !== undefined ? num(a[GPU_SHARE_ANNOTATION], 1) : undefined;
  return {
    namespace: p.metadata!.namespace!,
    name: p.metadata!.name!,
    fn: p.metadata?.labels?.[FN_LABEL] ?? '',
    cores: Math.min(1, num(a[QUOTA_ANNOTATION], 1)) * (base ? cpuCores(base) : 1),
    ...(share !== undefined && share < 1 ? { gpuShare: share } : {}),
    wholeGpus: num(limits['nvidia.com/gpu'], 0),
  };
}

const gated = (p: V1Pod) => (p.spec?.schedulingGates ?? []).some((g) => g.name === PLACEMENT_GATE);

/** Whether `node` may take `pod` by its nodeSelector, required node affinity and taints (the scheduler's filters the placement must respect). */
export function eligible(pod: V1Pod, node: V1Node): boolean {
  const labels = node.metadata?.labels ?? {};
  if (node.spec?.unschedulable) return false;
  if (!(node.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True')) return false;
  for (const [k, v] of Object.entries(pod.spec?.nodeSelector ?? {})) if (labels[k] !== v) return false;
  const terms = pod.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? [];
  const match = (e: { key: string; operator: string; values?: string[] }) => {
    const v = labels[e.key];
    if (e.operator === 'In') return v !== undefined && (e.values ?? []).includes(v);
    if (e.operator === 'NotIn') return v === undefined || !(e.values ?? []).includes(v);
    if (e.operator === 'Exists') return v !== undefined;
    if (e.operator === 'DoesNotExist') return v === undefined;
    return false;
  };
  if (terms.length && !terms.some((t) => (t.matchExpressions ?? []).every(match))) return false;
  const tol = pod.spec?.tolerations ?? [];
  const tolerates = (t: { key: string; value?: string; effect: string }) => tol.some((x) => (!x.effect || x.effect === t.effect) &&
    (x.operator === 'Exists' ? !x.key || x.key === t.key : x.key === t.key && (x.value ?? '') === (t.value ?? '')));
  return (node.spec?.taints ?? []).every((t) => t.effect === 'PreferNoSchedule' || tolerates(t));
}

/** Opens the placement gate of mlfaas's pending pods, one round at a time (the autoscaler's leader calls `round`). */
export class PlacementGate {
  private readonly core: CoreV1Api;

  constructor(kc: KubeConfig, private readonly place: PlaceFn) {
    this.core = kc.makeApiClient(CoreV1Api);
  }

  async round(): Promise<Released[]> {
    const [pods, nodes] = await Promise.all([
      this.core.listPodForAllNamespaces({ labelSelector: FN_LABEL }),
      this.core.listNode(),
    ]);
    const views: NodeView[] = nodes.items.map((n) => ({
      name: n.metadata!.name!,
      cpus: cpuCores(String(n.status?.allocatable?.cpu ?? '0')),
      gpus: num(n.status?.allocatable?.['nvidia.com/gpu'], 0),
      // bound to it, or released to it and not bound yet
      pods: pods.items.filter((p) => p.spec?.nodeName === n.metadata!.name ||
        (!p.spec?.nodeName && !gated(p) && p.spec?.nodeSelector?.[HOSTNAME] === n.metadata!.name))
        .map((p) => ({ ...needOf(p), ...(p.metadata?.annotations?.[GPU_DEVICE_ANNOTATION] !== undefined
          ? { gpu: num(p.metadata.annotations[GPU_DEVICE_ANNOTATION], 0) } : {}) })),
    }));
    const out: Released[] = [];
    // oldest first: a pod waiting longer is placed first
    const waiting = pods.items.filter((p) => gated(p) && !p.metadata?.deletionTimestamp)
      .sort((a, b) => String(a.metadata?.creationTimestamp ?? '').localeCompare(String(b.metadata?.creationTimestamp ?? '')));
    for (const p of waiting) {
      const need = needOf(p);
      const ok = nodes.items.filter((n) => eligible(p, n)).map((n) => n.metadata!.name!);
      const pl = this.place(need, views.filter((v) => ok.includes(v.name)));
      if ('wait' in pl) {
        out.push({ pod: need.name, why: pl.wait });
        continue;
      }
      await this.open(p, pl);
      views.find((v) => v.name === pl.node)?.pods.push({ ...need, ...(pl.gpu !== undefined ? { gpu: pl.gpu } : {}) });
      out.push({ pod: need.name, node: pl.node, gpu: pl.gpu, why: pl.why });
    }
    return out;
  }

  /** One JSON patch: the node, the GPU, why, and the gate removed (a `test` guards against a concurrent change of the gates). */
  private async open(p: V1Pod, pl: { node: string; gpu?: number; why: string }): Promise<void> {
    const gates = p.spec?.schedulingGates ?? [];
    const ops: object[] = [{ op: 'test', path: '/spec/schedulingGates', value: gates }];
    ops.push(p.spec?.nodeSelector ? { op: 'add', path: `/spec/nodeSelector/${HOSTNAME.replace(/~/g, '~0').replace(/\//g, '~1')}`, value: pl.node }
      : { op: 'add', path: '/spec/nodeSelector', value: { [HOSTNAME]: pl.node } });
    if (!p.metadata?.annotations) ops.push({ op: 'add', path: '/metadata/annotations', value: {} });
    const ann = (k: string) => `/metadata/annotations/${k.replace(/~/g, '~0').replace(/\//g, '~1')}`;
    if (pl.gpu !== undefined) ops.push({ op: 'add', path: ann(GPU_DEVICE_ANNOTATION), value: String(pl.gpu) });
    ops.push({ op: 'add', path: ann(PLACED_ANNOTATION), value: pl.why });
    const rest = gates.filter((g) => g.name !== PLACEMENT_GATE);
    ops.push(rest.length ? { op: 'replace', path: '/spec/schedulingGates', value: rest } : { op: 'remove', path: '/spec/schedulingGates' });
    await this.core.patchNamespacedPod({ name: p.metadata!.name!, namespace: p.metadata!.namespace!, body: ops }, JSON_PATCH);
  }
}
