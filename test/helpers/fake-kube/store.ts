/**
 * The object store behind the fake Kubernetes API server: what etcd plus the API server's generic
 * registry do for the resources the provider uses.
 *
 * - One global resourceVersion counter (a string on the wire, opaque to clients); every write
 *   bumps it and records a watch event.
 * - Create answers 409 AlreadyExists; update with a stale `metadata.resourceVersion` answers 409
 *   Conflict; read/update/delete of a missing object answers 404 NotFound — as `Status` objects.
 * - Server-set fields: uid, creationTimestamp, resourceVersion, generation (bumped when `spec`
 *   changes), namespace from the path; `generateName` is honoured.
 * - Watch history is compacted: a watch from a resourceVersion older than the oldest kept event
 *   gets an ERROR event with a 410 Gone `Status` (what the real server does after etcd
 *   compaction), which clients must answer with a fresh list.
 */
import { randomUUID } from 'node:crypto';

export type KObject = {
  apiVersion?: string;
  kind?: string;
  metadata: {
    name?: string;
    generateName?: string;
    namespace?: string;
    uid?: string;
    resourceVersion?: string;
    generation?: number;
    creationTimestamp?: string;
    deletionTimestamp?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    ownerReferences?: Array<{ apiVersion: string; kind: string; name: string; uid: string; controller?: boolean }>;
    [k: string]: unknown;
  };
  spec?: Record<string, unknown>;
  status?: Record<string, unknown>;
  [k: string]: unknown;
};

export interface WatchEvent {
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  object: KObject;
  rv: number;
  /** `group/version/resource`, e.g. `apps/v1/deployments`, `v1/pods`. */
  gvr: string;
}

/** An error the server turns into a `Status` body. */
export class ApiError extends Error {
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
  }

  status(): Record<string, unknown> {
    return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: this.message, reason: this.reason, details: this.details,
      code: this.code };
  }
}

export const notFound = (resource: string, name: string, group = '') =>
  new ApiError(404, 'NotFound', `${resource}${group ? `.${group}` : ''} "${name}" not found`, { name, group, kind: resource });

const clone = <T>(x: T): T => structuredClone(x);

export class Store {
  private rv = 1;
  private readonly objects = new Map<string, Map<string, KObject>>();
  private readonly history: WatchEvent[] = [];
  private readonly listeners = new Set<(e: WatchEvent) => void>();
  /** Events kept for watches; older starting points get 410 Gone. */
  historyLimit = 1000;

  private table(gvr: string): Map<string, KObject> {
    let t = this.objects.get(gvr);
    if (!t) this.objects.set(gvr, (t = new Map()));
    return t;
  }

  private static key(ns: string | undefined, name: string): string {
    return `${ns ?? ''}/${name}`;
  }

  currentVersion(): number {
    return this.rv;
  }

  /** The oldest resourceVersion a watch may start from. */
  oldestWatchable(): number {
    return this.history.length ? this.history[0].rv - 1 : this.rv;
  }

  /** Drops the watch history (as etcd compaction does): every older watch start gets 410. */
  compact(): void {
    this.history.length = 0;
  }

  private emit(type: WatchEvent['type'], gvr: string, object: KObject): void {
    const e: WatchEvent = { type, gvr, object: clone(object), rv: Number(object.metadata.resourceVersion) };
    this.history.push(e);
    if (this.history.length > this.historyLimit) this.history.splice(0, this.history.length - this.historyLimit);
    for (const l of this.listeners) l(e);
  }

  subscribe(l: (e: WatchEvent) => void): () => void {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  }

  /** Events after `rv` for `gvr`; throws 410 when `rv` is older than the kept history. */
  since(gvr: string, rv: number): WatchEvent[] {
    if (rv < this.oldestWatchable()) throw new ApiError(410, 'Expired', `too old resource version: ${rv} (${this.oldestWatchable()})`);
    return this.history.filter((e) => e.gvr === gvr && e.rv > rv);
  }

  list(gvr: string, ns?: string): KObject[] {
    return [...this.table(gvr).values()].filter((o) => ns === undefined || o.metadata.namespace === ns).map(clone);
  }

  get(gvr: string, ns: string | undefined, name: string): KObject | undefined {
    const o = this.table(gvr).get(Store.key(ns, name));
    return o ? clone(o) : undefined;
  }

  create(gvr: string, ns: string | undefined, obj: KObject, resource: string): KObject {
    const o = clone(obj);
    o.metadata = { ...(o.metadata ?? {}) };
    if (!o.metadata.name && o.metadata.generateName) o.metadata.name = `${o.metadata.generateName}${randomUUID().slice(0, 5)}`;
    const name = o.metadata.name;
    if (!name) throw new ApiError(422, 'Invalid', `${resource} is invalid: metadata.name: Required value: name or generateName is required`);
    if (!/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(name) || name.length > 253)
      throw new ApiError(422, 'Invalid',
        `${resource} "${name}" is invalid: metadata.name: Invalid value: "${name}": a lowercase RFC 1123 subdomain must consist of lower ` +
        `case alphanumeric characters, '-' or '.'`);
    const t = this.table(gvr);
    if (t.has(Store.key(ns, name))) throw new ApiError(409, 'AlreadyExists', `${resource} "${name}" already exists`, { name, kind: resource });
    if (ns !== undefined) {
      if (o.metadata.namespace && o.metadata.namespace !== ns)
        throw new ApiError(400, 'BadRequest', 'the namespace of the provided object does not match the namespace sent on the request');
      o.metadata.namespace = ns;
    }
    o.metadata.uid = randomUUID();
    o.metadata.creationTimestamp = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    o.metadata.generation = 1;
    o.metadata.resourceVersion = String(++this.rv);
    delete o.metadata.deletionTimestamp;
    t.set(Store.key(ns, name), o);
    this.emit('ADDED', gvr, o);
    return clone(o);
  }

  /**
   * Replaces an object. A `metadata.resourceVersion` in `obj` must match the stored one (409
   * Conflict otherwise); without one the write is unconditional (as PUT allows). `spec` changes
   * bump `generation`; `status` is kept from the stored object unless `subresource` is 'status'.
   */
  update(gvr: string, ns: string | undefined, name: string, obj: KObject, resource: string, subresource?: 'status'): KObject {
    const t = this.table(gvr);
    const cur = t.get(Store.key(ns, name));
    if (!cur) throw notFound(resource, name);
    const o = clone(obj);
    if (o.metadata?.name && o.metadata.name !== name)
      throw new ApiError(400, 'BadRequest', `the name of the object (${o.metadata.name}) does not match the name on the URL (${name})`);
    if (o.metadata?.resourceVersion && o.metadata.resourceVersion !== cur.metadata.resourceVersion)
      throw new ApiError(409, 'Conflict',
        `Operation cannot be fulfilled on ${resource} "${name}": the object has been modified; please apply your changes to the latest version and try again`,
        { name, kind: resource });
    o.metadata = { ...o.metadata, name, namespace: cur.metadata.namespace, uid: cur.metadata.uid, creationTimestamp: cur.metadata.creationTimestamp };
    if (cur.metadata.deletionTimestamp) o.metadata.deletionTimestamp = cur.metadata.deletionTimestamp;
    if (subresource === 'status') {
      o.spec = cur.spec;
      o.metadata.generation = cur.metadata.generation;
    } else {
      if (cur.status !== undefined) o.status = cur.status;
      const specChanged = JSON.stringify(o.spec ?? null) !== JSON.stringify(cur.spec ?? null);
      o.metadata.generation = (cur.metadata.generation ?? 1) + (specChanged ? 1 : 0);
    }
    // a no-op write changes nothing
    if (JSON.stringify({ ...o, metadata: { ...o.metadata, resourceVersion: '' } }) === JSON.stringify({ ...cur,
      metadata: { ...cur.metadata, resourceVersion: '' } })) return clone(cur);
    o.metadata.resourceVersion = String(++this.rv);
    t.set(Store.key(ns, name), o);
    this.emit('MODIFIED', gvr, o);
    return clone(o);
  }

  remove(gvr: string, ns: string | undefined, name: string, resource: string): KObject {
    const t = this.table(gvr);
    const cur = t.get(Store.key(ns, name));
    if (!cur) throw notFound(resource, name);
    t.delete(Store.key(ns, name));
    cur.metadata.resourceVersion = String(++this.rv);
    this.emit('DELETED', gvr, cur);
    return clone(cur);
  }
}
