/**
 * Deployments and pods of mlfaas functions, kept current by watches (client-node informers, not
 * polling) and by the provider's own writes (write-through, so a gateway reads what it just
 * wrote). An informer that fails is restarted after a pause; a 410 Gone makes it relist by itself.
 */
import { AppsV1Api, CoreV1Api, type KubeConfig, makeInformer, type Informer, type KubernetesObject, type V1Deployment, type V1Pod } from '@kubernetes/client-node';
import { FN_LABEL } from './manifests';

const MANAGED = 'app.kubernetes.io/managed-by=mlfaas';

type Key = string;
const keyOf = (o: KubernetesObject) => `${o.metadata?.namespace}/${o.metadata?.name}`;

/** Newer of two versions of one object (resourceVersions are etcd revisions: integers in practice). */
const newer = (a: KubernetesObject | undefined, b: KubernetesObject) => {
  const ra = Number(a?.metadata?.resourceVersion);
  const rb = Number(b.metadata?.resourceVersion);
  return !a || !(Number.isFinite(ra) && Number.isFinite(rb)) || rb >= ra;
};

export type CacheEvent = { kind: 'function' | 'replicas'; key: string };

export class KubeCache {
  private readonly pods = new Map<Key, V1Pod>();
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
    this.wire(deps as unknown as Informer<KubernetesObject>, this.deployments as Map<Key, KubernetesObject>, 'function');
    this.wire(pods as unknown as Informer<KubernetesObject>, this.pods as Map<Key, KubernetesObject>, 'replicas');
    await Promise.all(this.informers.map((i) => i.start()));
  }

  private wire(inf: Informer<KubernetesObject>, into: Map<Key, KubernetesObject>, kind: CacheEvent['kind']): void {
    const fnKey = (o: KubernetesObject) => `${o.metadata?.namespace}/${kind === 'function' ? o.metadata?.name : o.metadata?.labels?.[FN_LABEL]}`;
    const put = (o: KubernetesObject) => {
      if (newer(into.get(keyOf(o)), o)) into.set(keyOf(o), o);
      this.emit({ kind, key: fnKey(o) });
    };
    inf.on('add', put);
    inf.on('update', put);
    inf.on('delete', (o) => {
      into.delete(keyOf(o));
      this.emit({ kind, key: fnKey(o) });
    });
    inf.on('error', () => {
      // a failed list or watch stops a client-node informer; stop() also reports an AbortError
      if (!this.stopped) setTimeout(() => void (this.stopped || inf.start().catch(() => undefined)), 1000).unref();
    });
    this.informers.push(inf);
  }

  private emit(e: CacheEvent): void {
    for (const l of this.listeners) l(e);
  }

  subscribe(l: (e: CacheEvent) => void): () => void {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  }

  /** Records an object the provider just wrote (or read), unless the cache holds a newer one. */
  notePod(p: V1Pod): void {
    if (newer(this.pods.get(keyOf(p)), p)) this.pods.set(keyOf(p), p);
    this.emit({ kind: 'replicas', key: `${p.metadata?.namespace}/${p.metadata?.labels?.[FN_LABEL]}` });
  }

  podsOf(namespace: string, name: string): V1Pod[] {
    return [...this.pods.values()].filter((p) => p.metadata?.namespace === namespace && p.metadata?.labels?.[FN_LABEL] === name).sort((a, b) => String(a.metadata?.name).localeCompare(String(b.metadata?.name)));
  }

  pod(namespace: string, name: string): V1Pod | undefined {
    return this.pods.get(`${namespace}/${name}`);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.listeners.clear();
    await Promise.all(this.informers.map((i) => i.stop().catch(() => undefined)));
  }
}
