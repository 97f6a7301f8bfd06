// What the fake API server (server.ts) does to a path and an object for one resource type: which
// namespace, name and subresource a path names, the apiVersion/kind check on a body, apiVersion and
// kind filled in on the way out, and the label / field selector filter of a list or watch.
import type { Resource } from './resources';
import { parseFieldSelector, parseLabelSelector } from './selectors';
import { ApiError, type KObject } from './store';

export function matchPath(r: Resource, path: string): { ns?: string; name?: string; sub?: string } | undefined {
  const rest = path.slice(r.prefix.length + 1).split('/').filter(Boolean);
  if (r.namespaced) {
    if (rest[0] === r.plural && rest.length === 1) return {}; // across namespaces (list / watch)
    if (rest[0] !== 'namespaces' || rest[2] !== r.plural || rest.length < 3 || rest.length > 5) return undefined;
    return { ns: rest[1], name: rest[3], sub: rest[4] };
  }
  if (rest[0] !== r.plural || rest.length > 3) return undefined;
  if (r.plural === 'namespaces' && rest.length === 3) return undefined; // namespaced resources
  return { name: rest[1], sub: rest[2] };
}

export function typeCheck(r: Resource, o: KObject | undefined): void {
  if (!o || typeof o !== 'object' || !o.metadata)
    throw new ApiError(400, 'BadRequest', `${r.kind} in version "${r.apiVersion}" cannot be handled: metadata is required`);
  if (o.kind && o.kind !== r.kind)
    throw new ApiError(400, 'BadRequest',
      `the API version in the data (${o.apiVersion}) does not match the expected API version (${r.apiVersion}) or kind ${o.kind} is not ${r.kind}`);
}

export function typed(r: Resource, o: KObject): KObject {
  return { apiVersion: r.apiVersion, kind: r.kind, ...o };
}

export function selectorFilter(r: Resource, q: URLSearchParams): (o: KObject) => boolean {
  const labels = parseLabelSelector(q.get('labelSelector') ?? undefined);
  const fields = parseFieldSelector(q.get('fieldSelector') ?? undefined, ['metadata.name', 'metadata.namespace', ...r.fields]);
  return (o) => labels(o.metadata.labels) && fields(o);
}
