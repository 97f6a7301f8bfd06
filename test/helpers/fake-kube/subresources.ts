/**
 * Subresources of the fake API server: a Deployment's `scale` (autoscaling/v1 Scale), a Pod's
 * `log` (text, optionally followed) and `resize` (in-place resource changes, Kubernetes >= 1.33).
 */
import type { ServerResponse } from 'node:http';
import type { FakeKube } from './server';
import { ApiError, type KObject, type Store } from './store';

export function scaleOf(d: KObject): KObject {
  const sel = ((d.spec?.selector as { matchLabels?: Record<string, string> })?.matchLabels ?? {}) as Record<string, string>;
  return {
    kind: 'Scale',
    apiVersion: 'autoscaling/v1',
    metadata: { name: d.metadata.name, namespace: d.metadata.namespace, uid: d.metadata.uid, resourceVersion: d.metadata.resourceVersion,
      creationTimestamp: d.metadata.creationTimestamp },
    spec: { replicas: d.spec?.replicas as number },
    status: {
      replicas: (d.status?.replicas as number | undefined) ?? 0,
      selector: Object.entries(sel)
        .map(([k, v]) => `${k}=${v}`)
        .join(','),
    },
  };
}

/** Writes a Scale's spec.replicas into its Deployment (409 on a stale resourceVersion in a PUT). */
export function setScale(store: Store, d: KObject, scale: KObject, put: boolean): KObject {
  const n = (scale.spec as { replicas?: unknown } | undefined)?.replicas;
  if (!(Number.isInteger(n) && (n as number) >= 0))
    throw new ApiError(422, 'Invalid',
      `Scale.autoscaling "${d.metadata.name}" is invalid: spec.replicas: Invalid value: ${JSON.stringify(n)}: must be greater than or equal to 0`);
  const rv = put ? scale.metadata?.resourceVersion : undefined;
  return store.update('apps/v1/deployments', d.metadata.namespace, d.metadata.name!,
    { ...d, metadata: { ...d.metadata, resourceVersion: rv }, spec: { ...d.spec, replicas: n } }, 'deployments');
}

/**
 * The resize subresource changes only `spec.containers[*].resources` (and resizePolicy); any other
 * change is a 422, as the real server's resize strategy rejects it. The kubelet simulation
 * applies it and reports `status.containerStatuses[*].resources`.
 */
export function resizePod(store: Store, cur: KObject, next: KObject): KObject {
  type C = { name: string; resources?: unknown; resizePolicy?: unknown };
  const curC = (cur.spec?.containers ?? []) as C[];
  const nextC = (next.spec?.containers ?? []) as C[];
  const strip = (cs: C[]) => JSON.stringify(cs.map(({ resources: _r, resizePolicy: _p, ...c }) => c));
  const other = (o: KObject) => JSON.stringify({ ...o.spec, containers: undefined });
  if (strip(curC) !== strip(nextC) || other(cur) !== other(next))
    throw new ApiError(422, 'Invalid', `Pod "${cur.metadata.name}" is invalid: spec: Forbidden: only cpu and memory resources are mutable`);
  for (const c of nextC) {
    const res = (c.resources ?? {}) as { limits?: Record<string, string>; requests?: Record<string, string> };
    for (const k of [...Object.keys(res.limits ?? {}), ...Object.keys(res.requests ?? {})])
      if (k !== 'cpu' && k !== 'memory')
        throw new ApiError(422, 'Invalid',
          `Pod "${cur.metadata.name}" is invalid: spec.containers[0].resources: Forbidden: only cpu and memory resources are mutable (${k})`);
  }
  return store.update('v1/pods', cur.metadata.namespace, cur.metadata.name!,
    { ...cur, metadata: { ...cur.metadata, resourceVersion: next.metadata?.resourceVersion }, spec: { ...cur.spec, containers: nextC } }, 'pods');
}

/** `GET .../pods/NAME/log`: `tailLines`, `sinceSeconds`, `timestamps`, `follow` (until the pod goes or the client leaves). */
export function podLogs(kube: FakeKube, pod: KObject, q: URLSearchParams, res: ServerResponse): void {
  const key = `${pod.metadata.namespace}/${pod.metadata.name}`;
  const ts = q.get('timestamps') === 'true';
  const since = q.get('sinceSeconds') ? Date.now() - Number(q.get('sinceSeconds')) * 1000 : 0;
  const fmt = (e: { t: Date; line: string }) =>
    `${ts ? `${e.t.toISOString().replace('Z', '000000Z').replace(/\.(\d{3})000000Z$/, '.$1000000Z')} ` : ''}${e.line}\n`;
  let lines = (kube.logs.get(key) ?? []).filter((e) => e.t.getTime() >= since);
  if (q.get('tailLines')) lines = lines.slice(-Number(q.get('tailLines')));
  res.writeHead(200, { 'content-type': 'text/plain', ...(q.get('follow') === 'true' ? { 'transfer-encoding': 'chunked' } : {}) });
  res.flushHeaders();
  for (const e of lines) res.write(fmt(e));
  const ended = pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';
  if (q.get('follow') !== 'true' || ended) return void res.end();
  let sent = kube.logs.get(key)?.length ?? 0;
  const on = (k: string) => {
    if (k !== key) return;
    const all = kube.logs.get(key) ?? [];
    for (const e of all.slice(sent)) if (!res.writableEnded) res.write(fmt(e));
    sent = all.length;
  };
  kube.logEvents.add(on);
  const end = (k: string) => k === key && res.end();
  kube.logEnds.add(end);
  const gone = kube.store.subscribe((e) => {
    if (e.type === 'DELETED' && e.gvr === 'v1/pods' && e.object.metadata.uid === pod.metadata.uid) res.end();
  });
  res.on('close', () => {
    kube.logEvents.delete(on);
    kube.logEnds.delete(end);
    gone();
  });
}
