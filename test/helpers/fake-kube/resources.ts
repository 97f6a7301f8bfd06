/**
 * The resources the fake API server serves, with the server-side defaulting and validation the
 * provider relies on (as the real API server's registry strategies apply them).
 */
import { randomBytes } from 'node:crypto';
import { ApiError, type KObject } from './store';

export interface Resource {
  /** URL prefix: `/api/v1` or `/apis/<group>/<version>`. */
  prefix: string;
  /** Plural name in URLs. */
  plural: string;
  kind: string;
  apiVersion: string;
  namespaced: boolean;
  /** Fields a fieldSelector may name (besides metadata.name / metadata.namespace). */
  fields: string[];
  /** Server-side defaults and validation on create and update; throws ApiError 422. */
  prepare?(o: KObject, old?: KObject): void;
}

const invalid = (kind: string, name: string | undefined, field: string, msg: string) =>
  new ApiError(422, 'Invalid', `${kind} "${name ?? ''}" is invalid: ${field}: ${msg}`,
    { name, kind, causes: [{ reason: 'FieldValueInvalid', message: msg, field }] });

type Obj = Record<string, unknown>;

function defaultPodSpec(spec: Obj, kind: string, name: string | undefined, path: string): void {
  spec.restartPolicy ??= 'Always';
  spec.dnsPolicy ??= 'ClusterFirst';
  spec.schedulerName ??= 'default-scheduler';
  spec.terminationGracePeriodSeconds ??= 30;
  spec.securityContext ??= {};
  const containers = spec.containers as Obj[] | undefined;
  if (!Array.isArray(containers) || !containers.length) throw invalid(kind, name, `${path}.containers`, 'Required value');
  for (const [i, c] of containers.entries()) {
    if (!c.name) throw invalid(kind, name, `${path}.containers[${i}].name`, 'Required value');
    if (!c.image) throw invalid(kind, name, `${path}.containers[${i}].image`, 'Required value');
    const tag = String(c.image).split('/').pop()!;
    c.imagePullPolicy ??= !tag.includes(':') || tag.endsWith(':latest') ? 'Always' : 'IfNotPresent';
    c.terminationMessagePath ??= '/dev/termination-log';
    c.terminationMessagePolicy ??= 'File';
    c.resources ??= {};
    for (const p of (c.ports as Obj[] | undefined) ?? []) p.protocol ??= 'TCP';
  }
}

function selectorMatches(sel: Obj | undefined, labels: Record<string, string> | undefined): boolean {
  const ml = (sel?.matchLabels ?? {}) as Record<string, string>;
  return Object.entries(ml).every(([k, v]) => labels?.[k] === v);
}

let nextClusterIp = 10;

export const RESOURCES: Resource[] = [
  { prefix: '/api/v1', plural: 'namespaces', kind: 'Namespace', apiVersion: 'v1', namespaced: false, fields: ['status.phase'], prepare: (o) =>
    void (o.status = { phase: 'Active' }) },
  { prefix: '/api/v1', plural: 'nodes', kind: 'Node', apiVersion: 'v1', namespaced: false, fields: ['spec.unschedulable'] },
  {
    prefix: '/api/v1',
    plural: 'pods',
    kind: 'Pod',
    apiVersion: 'v1',
    namespaced: true,
    fields: ['spec.nodeName', 'status.phase', 'status.podIP'],
    prepare(o, old) {
      const spec = (o.spec ??= {}) as Obj;
      defaultPodSpec(spec, 'Pod', o.metadata.name, 'spec');
      if (old) {
        // a pod's spec is immutable but for images, activeDeadlineSeconds and tolerations additions; while it has
        // scheduling gates, gates may be removed and nodeSelector entries added (PodSchedulingReadiness, 1.30)
        const gated = ((old.spec?.schedulingGates ?? []) as Obj[]).length > 0;
        const strip = (s: Obj) =>
          JSON.stringify({ ...s, containers: (s.containers as Obj[]).map((c) => ({ ...c, image: '' })), tolerations: undefined,
            activeDeadlineSeconds: undefined, nodeName: undefined, ...(gated ? { schedulingGates: undefined, nodeSelector: undefined } : {}) });
        if (gated) gateChange(o.metadata.name, (old.spec ?? {}) as Obj, spec);
        if (strip(spec) !== strip((old.spec ?? {}) as Obj))
          throw invalid('Pod', o.metadata.name, 'spec',
            'Forbidden: pod updates may not change fields other than `spec.containers[*].image`, `spec.activeDeadlineSeconds` or ' +
            '`spec.tolerations` (only additions to existing tolerations)');
        if (old.spec?.nodeName && spec.nodeName !== old.spec.nodeName)
          throw invalid('Pod', o.metadata.name, 'spec.nodeName', 'Forbidden: field is immutable once set');
      }
      o.status ??= { phase: 'Pending', qosClass: 'BestEffort' };
    },
  },
  {
    prefix: '/api/v1',
    plural: 'services',
    kind: 'Service',
    apiVersion: 'v1',
    namespaced: true,
    fields: [],
    prepare(o, old) {
      const spec = (o.spec ??= {}) as Obj;
      spec.type ??= 'ClusterIP';
      spec.sessionAffinity ??= 'None';
      if (old?.spec?.clusterIP && spec.clusterIP && spec.clusterIP !== old.spec.clusterIP)
        throw invalid('Service', o.metadata.name, 'spec.clusterIP', 'Invalid value: field is immutable');
      spec.clusterIP ??= (old?.spec?.clusterIP as string | undefined) ?? `10.96.0.${nextClusterIp++ % 250}`;
      spec.clusterIPs = [spec.clusterIP];
      const ports = spec.ports as Obj[] | undefined;
      if (!Array.isArray(ports) || !ports.length) throw invalid('Service', o.metadata.name, 'spec.ports', 'Required value');
      for (const p of ports) {
        p.protocol ??= 'TCP';
        p.targetPort ??= p.port;
      }
      o.status ??= { loadBalancer: {} };
    },
  },
  {
    prefix: '/api/v1',
    plural: 'secrets',
    kind: 'Secret',
    apiVersion: 'v1',
    namespaced: true,
    fields: ['type'],
    prepare(o, old) {
      o.type ??= 'Opaque';
      if (old && old.type !== o.type) throw invalid('Secret', o.metadata.name, 'type', 'Invalid value: field is immutable');
      const data = { ...((o.data ?? {}) as Record<string, string>) };
      for (const [k, v] of Object.entries(data)) {
        if (typeof v !== 'string' || Buffer.from(v, 'base64').toString('base64') !== v.replace(/\s/g, ''))
          throw invalid('Secret', o.metadata.name, `data[${k}]`, 'Invalid value: illegal base64 data');
      }
      // stringData is write-only: merged into data, never stored (as the real server does)
      for (const [k, v] of Object.entries((o.stringData ?? {}) as Record<string, string>)) data[k] = Buffer.from(String(v)).toString('base64');
      delete o.stringData;
      o.data = data;
    },
  },
  { prefix: '/api/v1', plural: 'configmaps', kind: 'ConfigMap', apiVersion: 'v1', namespaced: true, fields: [] },
  { prefix: '/api/v1', plural: 'persistentvolumeclaims', kind: 'PersistentVolumeClaim', apiVersion: 'v1', namespaced: true, fields: [], prepare: (o) =>
    void (o.status ??= { phase: 'Bound' }) },
  {
    prefix: '/apis/apps/v1',
    plural: 'deployments',
    kind: 'Deployment',
    apiVersion: 'apps/v1',
    namespaced: true,
    fields: [],
    prepare(o, old) {
      const spec = (o.spec ??= {}) as Obj;
      spec.replicas ??= 1;
      if (!(Number.isInteger(spec.replicas) && (spec.replicas as number) >= 0))
        throw invalid('Deployment', o.metadata.name, 'spec.replicas', `Invalid value: ${JSON.stringify(spec.replicas)}: must be greater than or equal to 0`);
      spec.revisionHistoryLimit ??= 10;
      spec.progressDeadlineSeconds ??= 600;
      spec.strategy ??= { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '25%', maxSurge: '25%' } };
      const tpl = spec.template as { metadata?: { labels?: Record<string, string> }; spec?: Obj } | undefined;
      if (!spec.selector) throw invalid('Deployment', o.metadata.name, 'spec.selector', 'Required value');
      if (!tpl?.spec) throw invalid('Deployment', o.metadata.name, 'spec.template.spec', 'Required value');
      if (!selectorMatches(spec.selector as Obj, tpl.metadata?.labels))
        throw invalid('Deployment', o.metadata.name, 'spec.template.metadata.labels', 'Invalid value: `selector` does not match template `labels`');
      if (old && JSON.stringify(old.spec?.selector) !== JSON.stringify(spec.selector))
        throw invalid('Deployment', o.metadata.name, 'spec.selector', 'Invalid value: field is immutable');
      defaultPodSpec(tpl.spec, 'Deployment', o.metadata.name, 'spec.template.spec');
      o.status ??= {};
    },
  },
  { prefix: '/apis/coordination.k8s.io/v1', plural: 'leases', kind: 'Lease', apiVersion: 'coordination.k8s.io/v1', namespaced: true, fields: [] },
];

export const gvrOf = (r: Resource) => `${r.apiVersion}/${r.plural}`;

/** A short random suffix as the API server's name generator makes. */
export const suffix = (n = 5) => randomBytes(n).toString('hex').slice(0, n);

/** While a pod is gated: gates may only be removed, nodeSelector entries only added (422 otherwise). */
function gateChange(name: string | undefined, old: Obj, now: Obj): void {
  const names = (x: Obj) => ((x.schedulingGates ?? []) as Array<{ name: string }>).map((g) => g.name);
  if (names(now).some((g) => !names(old).includes(g)))
    throw invalid('Pod', name, 'spec.schedulingGates', 'Forbidden: only deletion is allowed, but found new scheduling gate');
  const was = (old.nodeSelector ?? {}) as Record<string, string>;
  const sel = (now.nodeSelector ?? {}) as Record<string, string>;
  if (Object.entries(was).some(([k, v]) => sel[k] !== v))
    throw invalid('Pod', name, 'spec.nodeSelector', 'Invalid value: only additions to spec.nodeSelector are allowed');
}
