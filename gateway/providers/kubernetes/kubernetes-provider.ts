/**
 * The Kubernetes provider: functions as Deployments + Services (faas-netes' mapping, see
 * manifests.ts), replicas from a pod watch, scaling through the scale subresource, secrets as
 * Secrets, logs from pods, per-replica quotas and weights as pod annotations the node agent
 * enforces, and CPU quotas resized in place (the pod `resize` subresource, Kubernetes >= 1.33)
 * where the API server has it.
 */
import { AppsV1Api, CoreV1Api, type KubeConfig, PatchStrategy, setHeaderOptions, type V1Deployment, VersionApi } from '@kubernetes/client-node';
import { ErrorCode, invalid, notFound, PlatformError } from '../../errors';
import { DEFAULT_NAMESPACE, type FunctionRef } from '../../lib/names';
import type { ChangeListener } from '../../registry/change-feed';
import type { FunctionSpec } from '../../registry/function-spec';
import type { ReplicaInfo } from '../../registry/registry';
import type { Enforcement, FunctionProvider, FunctionStatus, GpuEnforcement, LogLine, LogQuery, ProviderInfo } from '../function-provider';
import { mpsPercent } from '../../../node-runtime/gpu-replica';
import type { CapabilityProfile } from '../capability-profile';
import { DELETION_COST, deploymentFor, FN_LABEL, serviceFor, SM_PERCENT_ANNOTATION, specOf, statusOf } from './manifests';
import { KubeCache } from './pod-cache';
import { QUOTA_ANNOTATION, replicaOf, WEIGHT_ANNOTATION } from './pods';
import { apiCode, unless } from './api-errors';
import { KubeSecretStore } from './secret-store';
import { cpuLimitFor, podLogLines } from './pod-ops';

export type FunctionKind = 'inference' | 'training' | 'classic';

export interface KubernetesProviderOptions {
  version: { release: string; sha: string };
  /**
   * Whether the cluster can run an image and what kind of function it holds (an image registry
   * lookup, or the image store the nodes pull from). Without it every image is accepted as an
   * inference function, as faas-netes accepts any image.
   */
  images?: (image: string) => Promise<{ kind: FunctionKind } | undefined>;
  /** Capability profiles measured at deploy (in the shared Redis), if any. */
  profiles?: (ref: FunctionRef) => Promise<CapabilityProfile | undefined>;
  /** The GPU nodes' agents run the MPS control daemon (`MLFAAS_KUBE_GPU_MPS`): SM shares are enforced. */
  gpuMps?: boolean;
  /** Inference pods wait behind the fixed-cluster placement's scheduling gate (MLFAAS_CLUSTER_CAPACITY; placement-gate.ts). */
  placementGate?: boolean;
}

const MERGE = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const STRATEGIC = setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch);
const KIND_ANNOTATION = 'mlfaas.io/kind';
const fnId = (ref: FunctionRef) => `${ref.name}.${ref.namespace}`;

export class KubernetesProvider implements FunctionProvider {
  readonly secrets: KubeSecretStore;
  private readonly apps: AppsV1Api;
  private readonly core: CoreV1Api;
  private readonly cache: KubeCache;
  /** Whether the API server has the pod resize subresource (>= 1.33); known after start(). */
  private podResize = false;

  constructor(
    private readonly kc: KubeConfig,
    private readonly opts: KubernetesProviderOptions,
  ) {
    this.apps = kc.makeApiClient(AppsV1Api);
    this.core = kc.makeApiClient(CoreV1Api);
    this.secrets = new KubeSecretStore(this.core);
    this.cache = new KubeCache(kc);
  }

  /** Lists and starts the watches; learns the server's version. */
  async start(): Promise<void> {
    const v = await this.kc.makeApiClient(VersionApi).getCode();
    this.podResize = Number(v.major) > 1 || (Number(v.major) === 1 && parseInt(v.minor, 10) >= 33);
    await this.cache.start();
  }

  info(): ProviderInfo {
    return { provider: 'mlfaas-kubernetes', orchestration: 'kubernetes', version: this.opts.version };
  }

  enforcement(): Enforcement {
    return {
      spatial: 'none',
      temporal: 'cfs',
      memory: 'cgroup',
      gpu: this.gpuEnforcement(),
      summary: `Kubernetes: CPU and memory limits enforced by the kubelet (CFS quota, memory cgroup); CPU quota changes ${this.podResize
        ? 'by in-place pod resize (the pod resize subresource)'
        : 'by the node agent writing the pod cgroup (this API server has no pod resize subresource)'}; ${this.gpuEnforcement().summary}`,
    };
  }

  /** Fractional-GPU pods (`mlfaas.gpu.sm_share` < 1) only: a whole-GPU pod has its device to itself. */
  private gpuEnforcement(): GpuEnforcement {
    const sm = this.opts.gpuMps
      ? 'SM share by the node agent\'s MPS control daemon, fixed at a container\'s start (a new share restarts the pod\'s container in place)'
      : 'SM share NOT enforced (MLFAAS_KUBE_GPU_MPS is off: the nodes are not declared to run MPS)';
    return { smShare: this.opts.gpuMps ? 'mps' : 'none', timeQuota: 'limiter', memory: 'none',
      summary: `fractional-GPU pods: time quota by the node agent (tokend and the limiter); ${sm}; device memory not capped` };
  }

  private async kindOf(spec: FunctionSpec): Promise<FunctionKind> {
    if (!this.opts.images) return 'inference';
    const m = await this.opts.images(spec.image);
    if (!m)
      throw new PlatformError(ErrorCode.ImageNotFound,
        `image "${spec.image}" is not in the cluster's registry; build and push it with: mlfaas build -f stack.yml`, 'image');
    return m.kind;
  }

  private async ensureNamespace(ns: string): Promise<void> {
    const body = { metadata: { name: ns, annotations: { openfaas: '1' }, labels: { 'app.kubernetes.io/managed-by': 'mlfaas' } } };
    await unless(this.core.createNamespace({ body }), 409);
  }

  private deployment(spec: FunctionSpec, kind: FunctionKind, replicas: number): V1Deployment {
    const d = deploymentFor(spec, replicas, { placementGate: !!this.opts.placementGate && kind === 'inference' }) as V1Deployment;
    d.metadata!.annotations![KIND_ANNOTATION] = kind;
    return d;
  }

  async deploy(spec: FunctionSpec): Promise<void> {
    const kind = await this.kindOf(spec);
    await this.ensureNamespace(spec.namespace);
    try {
      await this.apps.createNamespacedDeployment({ namespace: spec.namespace, body: this.deployment(spec, kind, kind === 'training' ? 0 : spec.ml.minScale) });
    } catch (e) {
      if (apiCode(e) === 409)
        throw new PlatformError(ErrorCode.Conflict, `function ${spec.service}.${spec.namespace} already exists; use PUT to update`, 'service');
      throw e;
    }
    await unless(this.core.createNamespacedService({ namespace: spec.namespace, body: serviceFor(spec) }), 409);
  }

  private async read(ref: FunctionRef): Promise<V1Deployment | undefined> {
    const d = await unless(this.apps.readNamespacedDeployment({ name: ref.name, namespace: ref.namespace }), 404);
    return d && specOf(d) ? d : undefined;
  }

  private async mustRead(ref: FunctionRef): Promise<V1Deployment> {
    const d = await this.read(ref);
    if (!d) throw notFound(`function ${fnId(ref)} not found`);
    return d;
  }

  async update(spec: FunctionSpec): Promise<void> {
    const ref = { name: spec.service, namespace: spec.namespace };
    const kind = await this.kindOf(spec);
    for (let attempt = 0; ; attempt++) {
      const old = await this.mustRead(ref);
      const cur = old.spec?.replicas ?? 0;
      const oldKind = old.metadata?.annotations?.[KIND_ANNOTATION];
      const want = kind === 'training' ? 0 : oldKind === 'training' ? spec.ml.minScale : Math.min(Math.max(cur, spec.ml.minScale), spec.ml.maxScale);
      const body = this.deployment(spec, kind, want);
      body.metadata!.resourceVersion = old.metadata!.resourceVersion;
      try {
        await this.apps.replaceNamespacedDeployment({ name: spec.service, namespace: spec.namespace, body });
        return;
      } catch (e) {
        if (apiCode(e) === 404) throw notFound(`function ${fnId(ref)} not found`);
        if (apiCode(e) !== 409 || attempt >= 4) throw e; // changed meanwhile (a scale): read again
      }
    }
  }

  async remove(ref: FunctionRef): Promise<void> {
    await this.mustRead(ref);
    try {
      await this.apps.deleteNamespacedDeployment({ name: ref.name, namespace: ref.namespace, propagationPolicy: 'Background' });
    } catch (e) {
      if (apiCode(e) === 404) throw notFound(`function ${fnId(ref)} not found`);
      throw e;
    }
    await this.core.deleteNamespacedService({ name: ref.name, namespace: ref.namespace }).catch(() => undefined);
  }

  private status(d: V1Deployment): FunctionStatus | undefined {
    const s = statusOf(d as Parameters<typeof statusOf>[0], d.metadata?.annotations?.[KIND_ANNOTATION] ?? 'inference');
    if (!s) return s;
    // availability as the gateway counts it: ready pods, from the watch (fresher than status)
    return { ...s, availableReplicas: this.cache.podsOf(s.namespace, s.name).map(replicaOf).filter((r) => r.state === 'ready').length };
  }

  async get(ref: FunctionRef): Promise<FunctionStatus | undefined> {
    const d = await this.read(ref);
    return d && this.status(d);
  }

  async list(namespace?: string): Promise<FunctionStatus[]> {
    const labelSelector = 'app.kubernetes.io/managed-by=mlfaas';
    const l = namespace ? await this.apps.listNamespacedDeployment({ namespace,
      labelSelector }) : await this.apps.listDeploymentForAllNamespaces({ labelSelector });
    return l.items.map((d) => this.status(d)).filter((s): s is FunctionStatus => !!s);
  }

  async scale(ref: FunctionRef, replicas: number, remove: string[] = []): Promise<void> {
    const d = this.cache.deployment(ref.namespace, ref.name) ?? (await this.mustRead(ref));
    const n = d.metadata?.annotations?.[KIND_ANNOTATION] === 'training' ? 0 : replicas;
    // the ReplicaSet controller removes the pods with the lowest deletion cost first
    for (const id of remove) {
      await unless(this.core.patchNamespacedPod({ name: id, namespace: ref.namespace, body: { metadata: { annotations: { [DELETION_COST]: '-1000000' } } } },
        MERGE), 404);
    }
    try {
      await this.apps.patchNamespacedDeploymentScale({ name: ref.name, namespace: ref.namespace, body: { spec: { replicas: n } } }, MERGE);
    } catch (e) {
      if (apiCode(e) === 404) throw notFound(`function ${fnId(ref)} not found`);
      throw e;
    }
  }

  async wake(ref: FunctionRef): Promise<void> {
    for (let attempt = 0; attempt < 5; attempt++) {
      const s = await this.apps.readNamespacedDeploymentScale({ name: ref.name, namespace: ref.namespace }).catch((e: unknown) => {
        if (apiCode(e) === 404) throw notFound(`function ${fnId(ref)} not found`);
        throw e;
      });
      if ((s.spec?.replicas ?? 0) !== 0) return;
      // 0 → 1 only if still 0: the read version is a precondition (409 if someone scaled meanwhile)
      try {
        await this.apps.replaceNamespacedDeploymentScale({ name: ref.name, namespace: ref.namespace, body: { ...s, spec: { replicas: 1 } } });
        return;
      } catch (e) {
        if (apiCode(e) !== 409) throw e;
      }
    }
  }

  /** The replica's pod: from the watch, or read when the watch has not seen it yet. */
  private async replicaPod(ref: FunctionRef, id: string) {
    const p = this.cache.pod(ref.namespace, ref.name, id) ?? (await unless(this.core.readNamespacedPod({ name: id, namespace: ref.namespace }), 404));
    if (!p || p.metadata?.labels?.[FN_LABEL] !== ref.name) throw notFound(`replica ${id} of ${fnId(ref)} not found`);
    return p;
  }

  /**
   * A replica's <request, limit>: the `mlfaas.io/quota` annotation (the quota), and where the API
   * server resizes in place, `requests.cpu` = quota × the pod's declared cores and `limits.cpu` =
   * limit × them (absent: the quota, request = limit). A Guaranteed pod cannot change its QoS class
   * in a resize, so it is held to request = limit (the contract lets a provider that cannot lend
   * ignore `limit`). Without the resize subresource the node agent applies the quota alone.
   */
  async setQuota(ref: FunctionRef, replicaId: string, quota: number, limit?: number): Promise<void> {
    if (!(quota > 0 && quota <= 1)) throw invalid('quota', `${quota} must be in (0, 1]`);
    if (limit !== undefined && !(limit >= quota && limit <= 1)) throw invalid('limit', `${limit} must be in [quota ${quota}, 1]`);
    const pod = await this.replicaPod(ref, replicaId);
    this.cache.notePod(await this.core.patchNamespacedPod({ name: replicaId, namespace: ref.namespace,
      body: { metadata: { annotations: { [QUOTA_ANNOTATION]: String(quota) } } } }, MERGE));
    const request = cpuLimitFor(pod, quota);
    const lends = limit !== undefined && limit > quota && pod.status?.qosClass !== 'Guaranteed';
    const cap = lends ? cpuLimitFor(pod, limit) : request;
    if (request && cap && this.podResize) {
      const c = pod.spec!.containers[0];
      const resized = await this.core.patchNamespacedPodResize({ name: replicaId, namespace: ref.namespace,
        body: { spec: { containers: [{ name: c.name, resources: { requests: { cpu: request }, limits: { cpu: cap } } }] } } }, STRATEGIC);
      this.cache.notePod(resized);
    }
  }

  /**
   * A fractional-GPU pod's SM share: its `mlfaas.io/sm-percent` annotation, which its container's
   * `CUDA_MPS_ACTIVE_THREAD_PERCENTAGE` is read from at start; the node agent restarts a container
   * running at another percentage. Refused where the nodes are not declared to run MPS, and for a
   * pod without a fractional GPU.
   */
  async setSmShare(ref: FunctionRef, replicaId: string, smShare: number): Promise<void> {
    if (!(smShare > 0 && smShare <= 1)) throw invalid('smShare', `${smShare} must be in (0, 1]`);
    if (!this.opts.gpuMps) throw invalid('smShare', `SM shares are not enforced here (${this.gpuEnforcement().summary})`);
    const pod = await this.replicaPod(ref, replicaId);
    if (pod.metadata?.annotations?.[SM_PERCENT_ANNOTATION] === undefined)
      throw invalid('smShare', `replica ${replicaId} of ${fnId(ref)} has no fractional GPU (mlfaas.gpu.sm_share < 1)`);
    const body = { metadata: { annotations: { [SM_PERCENT_ANNOTATION]: String(mpsPercent(smShare)) } } };
    this.cache.notePod(await this.core.patchNamespacedPod({ name: replicaId, namespace: ref.namespace, body }, MERGE));
  }

  async setWeight(ref: FunctionRef, replicaId: string, weight: number): Promise<void> {
    if (!(weight > 0 && Number.isFinite(weight))) throw invalid('weight', `${weight} must be a positive number`);
    await this.replicaPod(ref, replicaId);
    this.cache.notePod(await this.core.patchNamespacedPod({ name: replicaId, namespace: ref.namespace,
      body: { metadata: { annotations: { [WEIGHT_ANNOTATION]: String(weight) } } } }, MERGE));
  }

  capability(ref: FunctionRef): Promise<CapabilityProfile | undefined> {
    return this.opts.profiles ? this.opts.profiles(ref) : Promise.resolve(undefined);
  }

  async endpoints(ref: FunctionRef): Promise<ReplicaInfo[]> {
    return this.cache.podsOf(ref.namespace, ref.name).map(replicaOf);
  }

  async *logs(ref: FunctionRef, q: LogQuery): AsyncIterable<LogLine> {
    const pods = this.cache.podsOf(ref.namespace, ref.name);
    const key = `${ref.namespace}/${ref.name}`;
    const onPods = (cb: (p: typeof pods) => void) =>
      this.cache.subscribe((e) => e.kind === 'replicas' && e.key === key && cb(this.cache.podsOf(ref.namespace, ref.name)));
    yield* podLogLines(this.kc, this.core, ref, pods, q, onPods);
  }

  async namespaces(): Promise<string[]> {
    const l = await this.core.listNamespace({});
    const marked = l.items.filter((n) => n.metadata?.annotations?.openfaas !== undefined).map((n) => n.metadata!.name!);
    return [...new Set([DEFAULT_NAMESPACE, ...marked.sort()])];
  }

  async watch(l: ChangeListener): Promise<() => void> {
    return this.cache.subscribe(l);
  }

  async close(): Promise<void> {
    await this.cache.stop();
  }
}
