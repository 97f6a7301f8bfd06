/**
 * Deployments and pods of mlfaas functions, kept current by watches (client-node informers, not
 * polling) and by the provider's own writes (write-through, so a gateway reads what it just
 * wrote). An informer that fails is restarted after a pause; a 410 Gone makes it relist by itself.
 */
import { AppsV1Api, CoreV1Api, type KubeConfig, makeInformer, type Informer, type KubernetesObject, type V1Deployment,
  type V1Pod } from '@kubernetes/client-node';
import { FN_LABEL } from './manifests';

const MANAGED = 'app.kubernetes.io/managed-by=mlfaas';

type Key = string;
const keyOf = (o: KubernetesObject) => `${o.metadata?.namespace}/${o.metadata?.name}`;
/** The function a pod belongs to, `namespace/function` (its `faas_function` label). */
const fnKeyOfPod = (o: KubernetesObject) => `${o.metadata?.namespace}/${o.metadata?.labels?.[FN_LABEL]}`;

/** Newer of two versions of one object (resourceVersions are etcd revisions: integers in practice). */
const newer = (a: KubernetesObject | undefined, b: KubernetesObject) => {
  const ra = Number(a?.metadata?.resourceVersion);
  const rb = Number(b.metadata?.resourceVersion);
  return !a || !(Number.isFinite(ra) && Number.isFinite(rb)) || rb >= ra;
};

export type CacheEvent = { kind: 'function' | 'replicas'; key: string };

export class KubeCache {
  /** Pods by function (`namespace/function`), then by `namespace/pod`: a function's replicas are read every tick. */
  private readonly pods = new Map<Key, Map<Key, V1Pod>>();
  private readonly deployments = new Map<Key, V1Deployment>();
  private readonly informers: Array<Informer<KubernetesObject>> = [];
  private readonly listeners = new Set<(e: CacheEvent) => void>();
  private stopped = false;

  constructor(private readonly kc: KubeConfig) {}

  async start(): Promise<void> {
    const apps = this.kc.makeApiClient(AppsV1Api);
    const core = this.kc.makeApiClient(CoreV1Api);
    const deps = makeInformer(this.kc, '/apis/apps/v1/deployments', () => apps.listDeploymentForAllNamespaces({ labelSelector: MANAGED }), MANAGED);
    const pods = makeInformer(this.kc, '/api/v1/pods', () => core.listPodForAllNamespaces({ labelSelector: FN_LABEL }), FN_LABEL);
    this.wire(deps as unknown as Informer<KubernetesObject>, 'function', (o) => this.putDeployment(o as V1Deployment), (o) =>
      this.deployments.delete(keyOf(o)));
    this.wire(pods as unknown as Informer<KubernetesObject>, 'replicas', (o) => this.putPod(o as V1Pod), (o) => this.removePod(o as V1Pod));
    await Promise.all(this.informers.map((i) => i.start()));
  }

  private wire(inf: Informer<KubernetesObject>, kind: CacheEvent['kind'], put: (o: KubernetesObject) => void, remove: (o: KubernetesObject) => void): void {
    const fnKey = (o: KubernetesObject) => (kind === 'function' ? keyOf(o) : fnKeyOfPod(o));
    const changed = (o: KubernetesObject) => {
      put(o);
      this.emit({ kind, key: fnKey(o) });
    };
    inf.on('add', changed);
    inf.on('update', changed);
    inf.on('delete', (o) => {
      remove(o);
      this.emit({ kind, key: fnKey(o) });
    });
    inf.on('error', () => {
      // a failed list or watch stops a client-node informer; stop() also reports an AbortError
      if (!this.stopped) setTimeout(() => void (this.stopped || inf.start().catch(() => undefined)), 1000).unref();
    });
    this.informers.push(inf);
  }

  private podsAt(fn: Key): Map<Key, V1Pod> {
    let m = this.pods.get(fn);
    if (!m) this.pods.set(fn, (m = new Map()));
    return m;
  }

  private putPod(p: V1Pod): void {
    const at = this.podsAt(fnKeyOfPod(p));
    if (newer(at.get(keyOf(p)), p)) at.set(keyOf(p), p);
  }

  private removePod(p: V1Pod): void {
    const fn = fnKeyOfPod(p);
    const at = this.pods.get(fn);
    at?.delete(keyOf(p));
    if (at && !at.size) this.pods.delete(fn);
  }

  private putDeployment(d: V1Deployment): void {
    if (newer(this.deployments.get(keyOf(d)), d)) this.deployments.set(keyOf(d), d);
  }

  private emit(e: CacheEvent): void {
    for (const l of this.listeners) l(e);
  }

  subscribe(l: (e: CacheEvent) => void): () => void {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  }

  /** Records a pod the provider just wrote, unless the cache holds a newer version. */
  notePod(p: V1Pod): void {
    this.putPod(p);
    this.emit({ kind: 'replicas', key: fnKeyOfPod(p) });
  }

  podsOf(namespace: string, name: string): V1Pod[] {
    return [...(this.pods.get(`${namespace}/${name}`)?.values() ?? [])].sort((a, b) => String(a.metadata?.name).localeCompare(String(b.metadata?.name)));
  }

  /** One of a function's pods by name, if the watch has seen it. */
  pod(namespace: string, fn: string, name: string): V1Pod | undefined {
    return this.pods.get(`${namespace}/${fn}`)?.get(`${namespace}/${name}`);
  }

  /** A function's Deployment, if the watch has seen it. */
  deployment(namespace: string, name: string): V1Deployment | undefined {
    return this.deployments.get(`${namespace}/${name}`);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.listeners.clear();
    await Promise.all(this.informers.map((i) => i.stop().catch(() => undefined)));
  }
}
