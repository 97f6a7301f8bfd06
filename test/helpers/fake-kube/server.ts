/**
 * A fake Kubernetes API server over real HTTP on 127.0.0.1: exactly the REST subset the
 * Kubernetes provider and the node agent use, with the documented behaviour they rely on
 * (see test/helpers/fake-kube/README.md for the list). Bearer-token auth when `token` is set
 * (401 otherwise, as an API server with token auth does). Every request is recorded, so tests can
 * check that RBAC grants exactly the verbs the code calls.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { applyPatch } from './patch';
import { gvrOf, RESOURCES, type Resource } from './resources';
import { SelectorError } from './selectors';
import { matchPath, selectorFilter, typeCheck, typed } from './resource-ops';
import { ApiError, notFound, Store, type KObject } from './store';
import { podLogs, resizePod, scaleOf, setScale } from './subresources';

/** One request as RBAC sees it. */
export interface Recorded {
  verb: 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete';
  /** `group/resource[/subresource]`, group '' for core (as in a Role's rules). */
  resource: string;
  namespace?: string;
  name?: string;
  method: string;
  path: string;
  contentType?: string;
  /** The answer's status code. */
  status?: number;
}

export interface FakeKubeOptions {
  token?: string;
  /** Interval of BOOKMARK events on watches that allow them (ms). */
  bookmarkMs?: number;
  /** Whether pods have the `resize` subresource (Kubernetes >= 1.33). */
  podResize?: boolean;
  /**
   * How a watch from a compacted resourceVersion is refused: an ERROR event carrying the 410 Status
   * in a 200 stream (what the apiserver's watch cache does, the default) or an HTTP 410 answer
   * (what some servers and proxies do). Clients must survive both.
   */
  goneAs?: 'event' | 'status';
}

const groupOf = (r: Resource) => (r.prefix === '/api/v1' ? '' : r.prefix.split('/')[2]);

export class FakeKube {
  readonly store = new Store();
  readonly requests: Recorded[] = [];
  /** Lines logged by each pod (`ns/name`), appended by the kubelet simulation. */
  readonly logs = new Map<string, Array<{ t: Date; line: string }>>();
  readonly logEvents = new Set<(key: string) => void>();
  /** Runs before a request is served (a test interleaves a concurrent change here). */
  beforeRequest?: (r: Recorded) => void;
  private server?: Server;
  private readonly open = new Set<ServerResponse>();
  url = '';

  constructor(readonly opts: FakeKubeOptions = {}) {}

  async start(): Promise<string> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((r) => this.server!.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this.url;
  }

  async stop(): Promise<void> {
    for (const r of this.open) r.destroy();
    this.server?.closeAllConnections();
    await new Promise((r) => this.server?.close(r) ?? r(undefined));
  }

  /** Ends every open watch (as an API server restart or a load balancer timeout does). */
  dropWatches(): void {
    for (const r of this.open) r.end();
  }

  /** Ends the followers of a pod's log (its container exited). */
  endLogs(key: string): void {
    for (const l of this.logEnds) l(key);
  }

  readonly logEnds = new Set<(key: string) => void>();

  appendLog(ns: string, pod: string, line: string): void {
    const k = `${ns}/${pod}`;
    if (!this.logs.has(k)) this.logs.set(k, []);
    this.logs.get(k)!.push({ t: new Date(), line });
    for (const l of this.logEvents) l(k);
  }

  private send(res: ServerResponse, code: number, body: unknown): void {
    res.writeHead(code, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  }

  private async body(req: IncomingMessage): Promise<unknown> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    if (!raw) return undefined;
    try {
      return JSON.parse(raw);
    } catch {
      throw new ApiError(400, 'BadRequest', `couldn't get version/kind; json parse error: ${raw.slice(0, 40)}`);
    }
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    try {
      if (this.opts.token && req.headers.authorization !== `Bearer ${this.opts.token}`) throw new ApiError(401, 'Unauthorized', 'Unauthorized');
      const u = new URL(req.url ?? '/', 'http://x');
      if (u.pathname === '/version')
        return this.send(res, 200,
          { major: '1', minor: this.opts.podResize === false ? '32' : '33', gitVersion: this.opts.podResize === false ? 'v1.32.0-fake' : 'v1.33.0-fake' });
      await this.route(req, res, u);
    } catch (e) {
      const err = e instanceof ApiError ? e
        : e instanceof SelectorError ? new ApiError(400, 'BadRequest', e.message) : new ApiError(500, 'InternalError', String(e));
      if (!res.headersSent) this.send(res, err.code, err.status());
      else res.end();
    }
  }

  private async route(req: IncomingMessage, res: ServerResponse, u: URL): Promise<void> {
    const found = RESOURCES.map((x) => ({ r: x, m: u.pathname.startsWith(`${x.prefix}/`) ? matchPath(x, u.pathname) : undefined })).find((x) => x.m);
    if (!found) throw new ApiError(404, 'NotFound', 'the server could not find the requested resource');
    const { r, m } = found as { r: Resource; m: NonNullable<typeof found.m> };
    const { ns, name, sub } = m;
    const method = req.method ?? 'GET';
    const q = u.searchParams;
    const watch = q.get('watch') === 'true' || q.get('watch') === '1';
    const verb: Recorded['verb'] = !name
      ? method === 'POST' ? 'create' : watch ? 'watch' : method === 'DELETE' ? 'delete' : 'list'
      : method === 'GET' ? 'get' : method === 'PUT' ? 'update' : method === 'PATCH' ? 'patch'
        : method === 'DELETE' ? 'delete' : method === 'POST' ? 'create' : 'get';
    const rec: Recorded = { verb, resource: `${groupOf(r)}/${r.plural}${sub ? `/${sub}` : ''}`, namespace: ns, name, method, path: u.pathname + u.search,
      contentType: req.headers['content-type'] };
    this.requests.push(rec);
    res.on('finish', () => (rec.status = res.statusCode));
    this.beforeRequest?.(rec);
    if (ns && r.plural !== 'namespaces' && !this.store.get('v1/namespaces', undefined, ns) && method !== 'GET')
      throw new ApiError(404, 'NotFound', `namespaces "${ns}" not found`, { name: ns, kind: 'namespaces' });
    const gvr = gvrOf(r);

    if (!name) {
      if (method === 'GET') return watch ? this.watch(r, ns, q, res) : this.send(res, 200, this.list(r, ns, q));
      if (method === 'POST') {
        const o = (await this.body(req)) as KObject;
        typeCheck(r, o);
        if (r.plural === 'deployments' || r.plural === 'pods') delete o.status; // status is the controllers' to write
        r.prepare?.(o);
        return this.send(res, 201, typed(r, this.store.create(gvr, r.namespaced ? ns : undefined, o, r.plural)));
      }
      throw new ApiError(405, 'MethodNotAllowed', `the server does not allow this method on the requested resource`);
    }
    const key = r.namespaced ? ns : undefined;
    if (sub) return this.subresource(r, key, name, sub, req, res, q);
    if (method === 'GET') {
      const o = this.store.get(gvr, key, name);
      if (!o) throw notFound(r.plural, name, groupOf(r));
      return this.send(res, 200, typed(r, o));
    }
    if (method === 'PUT' || method === 'PATCH') {
      const cur = this.store.get(gvr, key, name);
      if (!cur) throw notFound(r.plural, name, groupOf(r));
      const b = await this.body(req);
      const o = (method === 'PUT' ? b : applyPatch(req.headers['content-type'], cur, b)) as KObject;
      typeCheck(r, o);
      // a patch applies to the current version: no precondition unless the patch sets one
      if (method === 'PATCH' && !(b as KObject | undefined)?.metadata?.resourceVersion) o.metadata.resourceVersion = cur.metadata.resourceVersion;
      r.prepare?.(o, cur);
      return this.send(res, 200, typed(r, this.store.update(gvr, key, name, o, r.plural)));
    }
    if (method === 'DELETE') {
      const o = this.store.remove(gvr, key, name, r.plural);
      if (r.plural === 'namespaces') for (const x of RESOURCES.filter((y) => y.namespaced)) for (const c of this.store.list(gvrOf(x), name))
        this.store.remove(gvrOf(x), name, c.metadata.name!, x.plural);
      return this.send(res, 200, typed(r, o));
    }
    throw new ApiError(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource');
  }

  private list(r: Resource, ns: string | undefined, q: URLSearchParams): unknown {
    const f = selectorFilter(r, q);
    const items = this.store
      .list(gvrOf(r), r.namespaced ? ns : undefined)
      .filter(f)
      .sort((a, b) => `${a.metadata.namespace}/${a.metadata.name}`.localeCompare(`${b.metadata.namespace}/${b.metadata.name}`));
    // items in a typed list carry no kind/apiVersion (the real server omits them)
    return { kind: `${r.kind}List`, apiVersion: r.apiVersion, metadata: { resourceVersion: String(this.store.currentVersion()) },
      items: items.map(({ kind: _k, apiVersion: _a, ...o }) => o) };
  }

  /**
   * A watch: newline-delimited JSON events, chunked, until `timeoutSeconds` or the client leaves.
   * resourceVersion unset or "0": synthetic ADDED events for the current state first. Otherwise
   * the events after it, or one ERROR event carrying a 410 Expired Status when it is older than
   * the kept history. BOOKMARKs carry only kind, apiVersion and metadata.resourceVersion.
   */
  private watch(r: Resource, ns: string | undefined, q: URLSearchParams, res: ServerResponse): void {
    const f = selectorFilter(r, q);
    const gvr = gvrOf(r);
    const rvParam = q.get('resourceVersion');
    if (this.opts.goneAs === 'status' && rvParam && rvParam !== '0') this.store.since(gvr, Number(rvParam)); // throws 410 → a Status answer
    res.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
    res.flushHeaders(); // a watch answers at once, before any event (clients wait for the headers)
    this.open.add(res);
    const write = (type: string, object: unknown) => void (res.writableEnded || res.write(`${JSON.stringify({ type, object })}\n`));
    const inNs = (o: KObject) => !r.namespaced || ns === undefined || o.metadata.namespace === ns;
    let last = this.store.currentVersion();
    if (!rvParam || rvParam === '0') {
      for (const o of this.store.list(gvr, r.namespaced ? ns : undefined).filter(f)) write('ADDED', typed(r, o));
    } else {
      try {
        for (const e of this.store.since(gvr, Number(rvParam)).filter((e) => inNs(e.object) && f(e.object))) write(e.type, typed(r, e.object));
      } catch (e) {
        if (!(e instanceof ApiError)) throw e;
        write('ERROR', e.status());
        this.open.delete(res);
        return void res.end();
      }
    }
    const unsubscribe = this.store.subscribe((e) => {
      last = e.rv;
      if (e.gvr === gvr && inNs(e.object) && f(e.object)) write(e.type, typed(r, e.object));
    });
    const bookmark = () => write('BOOKMARK', { kind: r.kind, apiVersion: r.apiVersion,
      metadata: { resourceVersion: String(Math.max(last, this.store.currentVersion())) } });
    const bookmarks = q.get('allowWatchBookmarks') === 'true' ? setInterval(bookmark, this.opts.bookmarkMs ?? 1000) : undefined;
    const timeout = q.get('timeoutSeconds') ? setTimeout(() => res.end(), Number(q.get('timeoutSeconds')) * 1000) : undefined;
    res.on('close', () => {
      unsubscribe();
      clearInterval(bookmarks);
      clearTimeout(timeout);
      this.open.delete(res);
    });
  }

  private async subresource(r: Resource, ns: string | undefined, name: string, sub: string, req: IncomingMessage, res: ServerResponse,
    q: URLSearchParams): Promise<void> {
    const gvr = gvrOf(r);
    const cur = this.store.get(gvr, ns, name);
    const method = req.method ?? 'GET';
    if (r.plural === 'deployments' && sub === 'scale') {
      if (!cur) throw notFound('deployments', name, 'apps');
      if (method === 'GET') return this.send(res, 200, scaleOf(cur));
      const b = await this.body(req);
      const scale = (method === 'PUT' ? b : applyPatch(req.headers['content-type'], scaleOf(cur), b)) as KObject;
      const out = setScale(this.store, cur, scale, method === 'PUT');
      return this.send(res, 200, scaleOf(out));
    }
    if (r.plural === 'deployments' && sub === 'status' && method === 'GET') {
      if (!cur) throw notFound('deployments', name, 'apps');
      return this.send(res, 200, typed(r, cur));
    }
    if (r.plural === 'pods' && sub === 'log' && method === 'GET') {
      if (!cur) throw notFound('pods', name);
      return podLogs(this, cur, q, res);
    }
    if (r.plural === 'pods' && sub === 'resize' && this.opts.podResize !== false) {
      if (!cur) throw notFound('pods', name);
      if (method === 'GET') return this.send(res, 200, typed(r, cur));
      const b = await this.body(req);
      const o = (method === 'PUT' ? b : applyPatch(req.headers['content-type'], cur, b)) as KObject;
      return this.send(res, 200, typed(r, resizePod(this.store, cur, o)));
    }
    if (r.plural === 'pods' && sub === 'eviction' && method === 'POST') {
      if (!cur) throw notFound('pods', name);
      this.store.remove(gvr, ns, name, 'pods');
      return this.send(res, 201, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 });
    }
    throw new ApiError(404, 'NotFound', 'the server could not find the requested resource');
  }
}
