/**
 * A function's Kubernetes objects, as faas-netes makes them, plus what mlfaas adds for ML
 * functions. Pure: FunctionSpec in, plain API objects out (the provider sends them with
 * @kubernetes/client-node), and the reverse for `/system/functions`.
 *
 * faas-netes conventions kept (openfaas/faas-netes `pkg/handlers/deploy.go`, `secrets.go`):
 * - label `faas_function=<name>` on the Deployment, its selector, the pod template and the
 *   Service selector; annotation `prometheus.io.scrape: "false"` unless the user sets it;
 * - env `fprocess` from `envProcess`; the watchdog port 8080; probes on `/_/health` / `/_/ready`;
 * - secrets as one projected volume `<name>-projected-secrets` at `/var/openfaas/secrets`;
 * - `readOnlyRootFilesystem` with a writable `/tmp` emptyDir;
 * - constraints (`faas-cli --constraint "k=v"`) as a nodeSelector.
 * GPU scheduling follows OpenFaaS Profiles (runtimeClassName, tolerations, node affinity): a
 * function with `mlfaas.gpu` runs with the `nvidia` runtime class, tolerates the GPU taint and is
 * pinned to the inference virtual cluster's GPU nodes. A whole GPU is `nvidia.com/gpu: 1`; an SM
 * share below 1 is a fractional GPU the node agent serves (annotation `mlfaas.io/gpu-share`,
 * the limiter library from the node's hostPath through LD_PRELOAD, the tokend socket mounted).
 */
import type { FunctionSpec } from '../../registry/function-spec';
import type { FunctionStatus } from '../function-provider';
import { mpsPercent } from '../../../node-runtime/gpu-replica';
import { modelPodParts } from './model-init';

export const FN_LABEL = 'faas_function';
export const SPEC_ANNOTATION = 'mlfaas.io/spec';
export const GPU_SHARE_ANNOTATION = 'mlfaas.io/gpu-share';
/**
 * A fractional-GPU pod's SM share as MPS's percentage: its container's
 * `CUDA_MPS_ACTIVE_THREAD_PERCENTAGE` comes from it (the downward API, read at each container
 * start). The provider's `setSmShare` rewrites it; the node agent restarts a container that runs at
 * another percentage, so its next start reads the new one.
 */
export const SM_PERCENT_ANNOTATION = 'mlfaas.io/sm-percent';
export const VC_LABEL = 'mlfaas.io/vc';
/**
 * The fixed-cluster placement (issue 24): a pod is created behind this scheduling gate; the
 * placement picks its node and GPU, adds the node to its nodeSelector, writes the GPU to
 * `mlfaas.io/gpu-device` and removes the gate (placement-gate.ts); the scheduler then binds it there.
 */
export const PLACEMENT_GATE = 'mlfaas.io/placement';
/** The GPU (host index) a fractional-GPU pod uses: tokend's `gpuN` window the node agent applies its quota on, and its CUDA device. */
export const GPU_DEVICE_ANNOTATION = 'mlfaas.io/gpu-device';
/** Why the placement put a pod where it is, in words. */
export const PLACED_ANNOTATION = 'mlfaas.io/placed';
export const DELETION_COST = 'controller.kubernetes.io/pod-deletion-cost';
/** The function's declared CPU limit on each pod, so a quota is a fraction of it after resizes. */
export const CPU_BASE_ANNOTATION = 'mlfaas.io/cpu-base';
export const WATCHDOG_PORT = 8080;
export const SECRETS_MOUNT = '/var/openfaas/secrets';
/** Where the node agent puts the limiter library and tokend's socket on every GPU node. */
export const NODE_LIB_DIR = '/var/lib/mlfaas/lib';
export const NODE_TOKEND_DIR = '/var/run/mlfaas/tokend';
/** The node agent's MPS control daemon's folders (pipe: what clients read; log). */
export const NODE_MPS_DIR = '/var/run/mlfaas/mps';

type Obj = Record<string, unknown>;

/** `k=v`, `k==v` or `k = v` constraints (faas-cli) → a nodeSelector; others are refused by the spec parser. */
export function nodeSelectorOf(constraints: readonly string[] = []): Record<string, string> {
  const out: Record<string, string> = {};
  for (const c of constraints) {
    const m = /^\s*([^=!\s]+)\s*==?\s*(\S+)\s*$/.exec(c);
    if (m) out[m[1]] = m[2];
  }
  return out;
}

const resources = (spec: FunctionSpec) => {
  const r: { limits?: Record<string, string>; requests?: Record<string, string> } = {};
  if (spec.limits && Object.keys(spec.limits).length) r.limits = { ...(spec.limits as Record<string, string>) };
  if (spec.requests && Object.keys(spec.requests).length) r.requests = { ...(spec.requests as Record<string, string>) };
  if (spec.ml.gpus && (spec.ml.gpuSmShare ?? 1) >= 1) r.limits = { ...(r.limits ?? {}), 'nvidia.com/gpu': String(spec.ml.gpus) };
  return r;
};

export interface TemplateOptions {
  /** Pods wait behind PLACEMENT_GATE for the fixed-cluster placement to choose their node and GPU. */
  placementGate?: boolean;
}

export function podTemplate(spec: FunctionSpec, o: TemplateOptions = {}): Obj {
  const name = spec.service;
  const gpu = !!spec.ml.gpus;
  const share = gpu && (spec.ml.gpuSmShare ?? 1) < 1 ? spec.ml.gpuSmShare : undefined;
  const env: Array<{ name: string; value?: string; valueFrom?: Obj }> = Object.entries(spec.envVars).map(([k, v]) => ({ name: k, value: v }));
  if (spec.envProcess) env.push({ name: 'fprocess', value: spec.envProcess });
  env.push(
    { name: 'MLFAAS_FUNCTION_NAME', value: name },
    { name: 'MLFAAS_NAMESPACE', value: spec.namespace },
    { name: 'MLFAAS_REPLICA_ID', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
    { name: 'MLFAAS_SECRETS_DIR', value: SECRETS_MOUNT },
    { name: 'HOST', value: '0.0.0.0' },
    { name: 'PORT', value: String(WATCHDOG_PORT) },
  );
  if (spec.ml.maxBatchSize) env.push({ name: 'MAX_BATCH_SIZE', value: String(spec.ml.maxBatchSize) });
  if (spec.ml.model && !spec.envVars.MODEL_PATH && !spec.ml.modelSource) env.push({ name: 'MODEL', value: spec.ml.model });
  const volumes: Obj[] = [];
  const mounts: Obj[] = [];
  // a model by URI (model-init.ts): fetched into the node's cache by an init container, mounted read-only
  const model = spec.ml.modelSource ? modelPodParts(spec.ml.modelSource) : undefined;
  if (model) {
    const own = env.findIndex((e) => e.name === 'MODEL_PATH');
    if (own >= 0) env.splice(own, 1);
    env.push(...model.env);
    volumes.push(...model.volumes);
    mounts.push(...model.mounts);
  }
  if (spec.secrets?.length) {
    volumes.push({ name: `${name}-projected-secrets`, projected: { sources: spec.secrets.map((s) => ({ secret: { name: s } })) } });
    mounts.push({ name: `${name}-projected-secrets`, mountPath: SECRETS_MOUNT, readOnly: true });
  }
  if (spec.readOnlyRootFilesystem) {
    volumes.push({ name: 'temp', emptyDir: {} });
    mounts.push({ name: 'temp', mountPath: '/tmp' });
  }
  if (share !== undefined) {
    volumes.push(
      { name: 'mlfaas-lib', hostPath: { path: NODE_LIB_DIR, type: 'Directory' } },
      { name: 'mlfaas-tokend', hostPath: { path: NODE_TOKEND_DIR, type: 'Directory' } },
      { name: 'mlfaas-mps', hostPath: { path: `${NODE_MPS_DIR}/pipe`, type: 'DirectoryOrCreate' } },
    );
    mounts.push({ name: 'mlfaas-lib', mountPath: NODE_LIB_DIR, readOnly: true }, { name: 'mlfaas-tokend', mountPath: NODE_TOKEND_DIR },
      { name: 'mlfaas-mps', mountPath: `${NODE_MPS_DIR}/pipe` });
    env.push(
      { name: 'LD_PRELOAD', value: `${NODE_LIB_DIR}/libmlfaas_limiter.so` },
      { name: 'MLFAAS_TOKEND_SOCKET', value: `${NODE_TOKEND_DIR}/tokend.sock` },
      // the SM share, served by the node agent's MPS control daemon (a client without a daemon runs unshared)
      { name: 'CUDA_MPS_PIPE_DIRECTORY', value: `${NODE_MPS_DIR}/pipe` },
      { name: 'CUDA_MPS_ACTIVE_THREAD_PERCENTAGE', valueFrom: { fieldRef: { fieldPath: `metadata.annotations['${SM_PERCENT_ANNOTATION}']` } } },
    );
    // the GPU the placement chose (its annotation is written before the gate opens, so before the container starts)
    if (o.placementGate) env.push({ name: 'CUDA_VISIBLE_DEVICES', valueFrom: { fieldRef: { fieldPath: `metadata.annotations['${GPU_DEVICE_ANNOTATION}']` } } });
  }
  const probe = (path: string) =>
    ({ httpGet: { path, port: WATCHDOG_PORT }, initialDelaySeconds: 0, periodSeconds: 2, timeoutSeconds: 1, failureThreshold: 3 });
  const selector = nodeSelectorOf(spec.constraints);
  const podSpec: Obj = {
    containers: [
      {
        name,
        image: spec.image,
        ports: [{ name: 'http', containerPort: WATCHDOG_PORT, protocol: 'TCP' }],
        env,
        resources: resources(spec),
        readinessProbe: probe('/_/ready'),
        livenessProbe: probe('/_/health'),
        securityContext: { readOnlyRootFilesystem: !!spec.readOnlyRootFilesystem, allowPrivilegeEscalation: false },
        ...(mounts.length ? { volumeMounts: mounts } : {}),
      },
    ],
    ...(model ? { initContainers: model.initContainers } : {}),
    enableServiceLinks: false,
    automountServiceAccountToken: false, // function code gets no credentials to the API server
    ...(volumes.length ? { volumes } : {}),
    ...(Object.keys(selector).length ? { nodeSelector: selector } : {}),
    ...(o.placementGate ? { schedulingGates: [{ name: PLACEMENT_GATE }] } : {}),
  };
  if (gpu) {
    podSpec.runtimeClassName = 'nvidia';
    podSpec.tolerations = [{ key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' }];
    podSpec.affinity = { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: VC_LABEL,
      operator: 'In', values: ['inference'] }] }] } } };
  } else {
    // off the training virtual cluster's nodes (and so off a node loaned to it); a cluster without the labels is unaffected
    podSpec.affinity = { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: VC_LABEL,
      operator: 'NotIn', values: ['training'] }] }] } } };
  }
  return {
    metadata: {
      labels: { ...spec.labels, [FN_LABEL]: name },
      annotations: {
        'prometheus.io.scrape': 'false',
        ...spec.annotations,
        ...(share !== undefined ? { [GPU_SHARE_ANNOTATION]: String(share), [SM_PERCENT_ANNOTATION]: String(mpsPercent(share)) } : {}),
        ...(spec.limits?.cpu ? { [CPU_BASE_ANNOTATION]: spec.limits.cpu } : {}),
      },
    },
    spec: podSpec,
  };
}

/** The Deployment for a function; `replicas` is min_scale on deploy, the current count on update. */
export function deploymentFor(spec: FunctionSpec, replicas: number, o: TemplateOptions = {}): Obj {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: {
      name: spec.service,
      namespace: spec.namespace,
      labels: { ...spec.labels, [FN_LABEL]: spec.service, 'app.kubernetes.io/managed-by': 'mlfaas' },
      annotations: { 'prometheus.io.scrape': 'false', ...spec.annotations, [SPEC_ANNOTATION]: JSON.stringify(spec) },
    },
    spec: {
      replicas,
      selector: { matchLabels: { [FN_LABEL]: spec.service } },
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } },
      revisionHistoryLimit: 5,
      template: podTemplate(spec, o),
    },
  };
}

export function serviceFor(spec: FunctionSpec): Obj {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: spec.service, namespace: spec.namespace, labels: { [FN_LABEL]: spec.service, 'app.kubernetes.io/managed-by': 'mlfaas' },
      annotations: { 'prometheus.io.scrape': 'false' } },
    spec: { type: 'ClusterIP', selector: { [FN_LABEL]: spec.service },
      ports: [{ name: 'http', port: WATCHDOG_PORT, targetPort: WATCHDOG_PORT, protocol: 'TCP' }] },
  };
}

/** The spec a Deployment was made from (its annotation), or undefined for one mlfaas did not make. */
export function specOf(dep: { metadata?: { annotations?: Record<string, string> } }): FunctionSpec | undefined {
  const raw = dep.metadata?.annotations?.[SPEC_ANNOTATION];
  if (!raw) return undefined;
  try {
    return JSON.parse(raw) as FunctionSpec;
  } catch {
    return undefined;
  }
}

/** `/system/functions`' view of a Deployment mlfaas made. */
export function statusOf(dep: { metadata?: { creationTimestamp?: string | Date; annotations?: Record<string, string> }; spec?: { replicas?: number };
  status?: { availableReplicas?: number }; }, kind: string): FunctionStatus | undefined {
  const spec = specOf(dep);
  if (!spec) return undefined;
  const created = dep.metadata?.creationTimestamp;
  return {
    name: spec.service,
    image: spec.image,
    namespace: spec.namespace,
    envProcess: spec.envProcess,
    envVars: spec.envVars,
    constraints: spec.constraints,
    secrets: spec.secrets,
    labels: spec.labels,
    annotations: spec.annotations,
    limits: spec.limits,
    requests: spec.requests,
    readOnlyRootFilesystem: spec.readOnlyRootFilesystem,
    replicas: dep.spec?.replicas ?? 0,
    availableReplicas: dep.status?.availableReplicas ?? 0,
    createdAt: created instanceof Date ? created.toISOString() : (created ?? new Date(0).toISOString()),
    kind,
  };
}
