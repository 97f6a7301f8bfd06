/**
 * The fake Kubernetes API server behaves as the real one documents for the subset the provider
 * uses: Status bodies with the right codes, optimistic concurrency, selectors, patches, watches
 * (history, bookmarks, 410 Gone), subresources, and the controller simulation.
 */
import { FakeCluster } from '../helpers/fake-kube/cluster';
import { jsonPatch, mergePatch, strategicMergePatch } from '../helpers/fake-kube/patch';
import { parseLabelSelector } from '../helpers/fake-kube/selectors';
import { FakeKube } from '../helpers/fake-kube/server';
import { eventually } from '../helpers/platform';

const dep = (name: string, replicas = 1, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name, labels: { faas_function: name } },
  spec: {
    replicas,
    selector: { matchLabels: { faas_function: name } },
    template: { metadata: { labels: { faas_function: name } }, spec: { containers: [{ name, image: 'test/echo-http:1', ...extra }] } },
  },
});

describe('fake kube: label selectors', () => {
  test.each([
    { sel: 'a=b', labels: { a: 'b' }, want: true },
    { sel: 'a==b', labels: { a: 'c' }, want: false },
    { sel: 'a!=b', labels: {}, want: true },
    { sel: 'a in (x, y),b', labels: { a: 'y', b: '' }, want: true },
    { sel: 'a notin (x)', labels: { a: 'x' }, want: false },
    { sel: '!a', labels: { a: '1' }, want: false },
    { sel: 'mlfaas.io/vc=training', labels: { 'mlfaas.io/vc': 'training' }, want: true },
  ])('$sel on $labels → $want', ({ sel, labels, want }) => {
    expect(parseLabelSelector(sel)(labels as Record<string, string>)).toBe(want);
  });

  it('rejects a malformed selector', () => {
    expect(() => parseLabelSelector('a b=c')).toThrow(/unable to parse/);
  });
});

describe('fake kube: patches', () => {
  it('merge patch merges objects, deletes on null, replaces lists', () => {
    expect(mergePatch({ a: { b: 1, c: 2 }, l: [1, 2] }, { a: { c: null, d: 3 }, l: [3] })).toEqual({ a: { b: 1, d: 3 }, l: [3] });
  });

  it('strategic merge patch merges containers by name and env by name', () => {
    const t = { containers: [{ name: 'f', image: 'a', env: [{ name: 'X', value: '1' }] }, { name: 'g', image: 'b' }] };
    const out = strategicMergePatch(t, { containers: [{ name: 'f', env: [{ name: 'Y', value: '2' }] }, { name: 'g', $patch: 'delete' }] });
    expect(out).toEqual({ containers: [{ name: 'f', image: 'a', env: [{ name: 'X', value: '1' }, { name: 'Y', value: '2' }] }] });
  });

  it('json patch applies add/replace/remove/test, and a failed test rejects the whole patch', () => {
    const doc = { spec: { replicas: 1, l: ['a'] } };
    expect(jsonPatch(doc,
      [{ op: 'replace', path: '/spec/replicas', value: 3 }, { op: 'add', path: '/spec/l/-', value: 'b' }, { op: 'remove', path: '/spec/l/0' }]))
      .toEqual({ spec: { replicas: 3, l: ['b'] } });
    expect(() => jsonPatch(doc, [{ op: 'test', path: '/spec/replicas', value: 2 }])).toThrow(/test failed/);
    expect(doc.spec.replicas).toBe(1);
  });
});

describe('fake kube: the REST API', () => {
  const kube = new FakeKube({ token: 't0k', bookmarkMs: 50 });
  let cluster: FakeCluster;
  const call = async (method: string, path: string, body?: unknown, ct = 'application/json') => {
    const res = await fetch(kube.url + path,
      { method, headers: { authorization: 'Bearer t0k', 'content-type': ct }, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    return { status: res.status, body: text.startsWith('{') ? JSON.parse(text) : text };
  };

  beforeAll(async () => {
    await kube.start();
    cluster = new FakeCluster(kube, { readyDelayMs: 20, evictAfterMs: 100 });
    cluster.addNode('n1', { labels: { 'mlfaas.io/vc': 'inference' } });
    cluster.addNode('n2', { labels: { 'mlfaas.io/vc': 'training' }, gpus: 2 });
    cluster.start();
    await call('POST', '/api/v1/namespaces', { metadata: { name: 'openfaas-fn' } });
  });
  afterAll(async () => {
    await cluster.stop();
    await kube.stop();
  });

  it('refuses a request without the token with 401', async () => {
    const res = await fetch(kube.url + '/api/v1/namespaces');
    expect(res.status).toBe(401);
  });

  it('creates with server defaults, and answers 409 AlreadyExists and 404 NotFound as Status objects', async () => {
    const c = await call('POST', '/apis/apps/v1/namespaces/openfaas-fn/deployments', dep('d1'));
    expect(c.status).toBe(201);
    expect(c.body.metadata)
      .toEqual(expect.objectContaining({ namespace: 'openfaas-fn', uid: expect.any(String), resourceVersion: expect.any(String), generation: 1 }));
    expect(c.body.spec.strategy.type).toBe('RollingUpdate');
    expect(c.body.spec.template.spec.containers[0].imagePullPolicy).toBe('IfNotPresent');
    const again = await call('POST', '/apis/apps/v1/namespaces/openfaas-fn/deployments', dep('d1'));
    expect(again).toEqual({ status: 409, body: expect.objectContaining({ kind: 'Status', status: 'Failure', reason: 'AlreadyExists', code: 409 }) });
    const missing = await call('GET', '/apis/apps/v1/namespaces/openfaas-fn/deployments/nope');
    expect(missing).toEqual({ status: 404, body: expect.objectContaining({ kind: 'Status', reason: 'NotFound', code: 404 }) });
    const noNs = await call('POST', '/apis/apps/v1/namespaces/nowhere/deployments', dep('d1'));
    expect(noNs.status).toBe(404);
  });

  it('rejects a selector that does not match the template with 422 naming the field', async () => {
    const bad = dep('d-bad');
    bad.spec.selector.matchLabels.faas_function = 'other';
    const r = await call('POST', '/apis/apps/v1/namespaces/openfaas-fn/deployments', bad);
    expect(r.status).toBe(422);
    expect(r.body.message).toMatch(/spec.template.metadata.labels/);
  });

  it('answers 409 Conflict to an update with a stale resourceVersion', async () => {
    const cur = (await call('GET', '/apis/apps/v1/namespaces/openfaas-fn/deployments/d1')).body;
    const first = await call('PUT', '/apis/apps/v1/namespaces/openfaas-fn/deployments/d1', { ...cur, spec: { ...cur.spec, replicas: 2 } });
    expect(first.status).toBe(200);
    expect(first.body.metadata.generation).toBe(2);
    const stale = await call('PUT', '/apis/apps/v1/namespaces/openfaas-fn/deployments/d1', { ...cur, spec: { ...cur.spec, replicas: 3 } });
    expect(stale).toEqual({ status: 409, body: expect.objectContaining({ reason: 'Conflict' }) });
  });

  it('runs the deployment controller: pods scheduled, ready, status counted', async () => {
    const ok = await eventually(async () => (await call('GET', '/apis/apps/v1/namespaces/openfaas-fn/deployments/d1')).body.status?.availableReplicas === 2,
      5000);
    expect(ok).toBe(true);
    const pods = (await call('GET', '/api/v1/namespaces/openfaas-fn/pods?labelSelector=faas_function%3Dd1')).body;
    expect(pods.kind).toBe('PodList');
    expect(pods.items).toHaveLength(2);
    expect(pods.items[0].kind).toBeUndefined(); // typed list items carry no kind
    expect(pods.items.every((p: { spec: { nodeName: string }; status: { podIP: string } }) => p.spec.nodeName && p.status.podIP)).toBe(true);
    const byField = (await call('GET', `/api/v1/namespaces/openfaas-fn/pods?fieldSelector=spec.nodeName%3D${pods.items[0].spec.nodeName}`)).body;
    expect(byField.items.length).toBeGreaterThanOrEqual(1);
  });

  it('serves the scale subresource (autoscaling/v1 Scale) and scales down the pod with the lowest deletion cost', async () => {
    const s = await call('GET', '/apis/apps/v1/namespaces/openfaas-fn/deployments/d1/scale');
    expect(s.body)
      .toEqual(expect.objectContaining({ kind: 'Scale', apiVersion: 'autoscaling/v1', spec: { replicas: 2 },
        status: expect.objectContaining({ selector: 'faas_function=d1' }) }));
    const pods = (await call('GET',
      '/api/v1/namespaces/openfaas-fn/pods?labelSelector=faas_function%3Dd1')).body.items as Array<{ metadata: { name: string } }>;
    const victim = pods[1].metadata.name;
    await call('PATCH', `/api/v1/namespaces/openfaas-fn/pods/${victim}`,
      { metadata: { annotations: { 'controller.kubernetes.io/pod-deletion-cost': '-1000' } } }, 'application/merge-patch+json');
    const p = await call('PATCH', '/apis/apps/v1/namespaces/openfaas-fn/deployments/d1/scale', { spec: { replicas: 1 } }, 'application/merge-patch+json');
    expect(p.body.spec.replicas).toBe(1);
    const left = await eventually(async () => {
      const items = (await call('GET',
        '/api/v1/namespaces/openfaas-fn/pods?labelSelector=faas_function%3Dd1')).body.items as Array<{ metadata: { name: string } }>;
      return items.length === 1 ? items[0].metadata.name : undefined;
    }, 5000);
    expect(left).toBe(pods[0].metadata.name);
    const bad = await call('PUT', '/apis/apps/v1/namespaces/openfaas-fn/deployments/d1/scale', { metadata: { name: 'd1' }, spec: { replicas: -1 } });
    expect(bad.status).toBe(422);
  });

  it('streams watch events after a resourceVersion, sends bookmarks, and answers a too-old version with a 410 ERROR event', async () => {
    const list = (await call('GET', '/apis/apps/v1/namespaces/openfaas-fn/deployments')).body;
    const ac = new AbortController();
    const res = await fetch(
      `${kube.url}/apis/apps/v1/namespaces/openfaas-fn/deployments?watch=true&allowWatchBookmarks=true&resourceVersion=${list.metadata.resourceVersion}`,
      { headers: { authorization: 'Bearer t0k' }, signal: ac.signal },
    );
    const reader = res.body!.getReader();
    await call('POST', '/apis/apps/v1/namespaces/openfaas-fn/deployments', dep('d2', 0));
    const seen: Array<{ type: string; object: { metadata: { name?: string } } }> = [];
    let buf = '';
    const deadline = Date.now() + 5000;
    while (Date.now() < deadline && !(seen.some((e) => e.type === 'ADDED' && e.object.metadata.name === 'd2') && seen.some((e) => e.type === 'BOOKMARK'))) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += Buffer.from(value).toString();
      const lines = buf.split('\n');
      buf = lines.pop()!;
      for (const l of lines) if (l) seen.push(JSON.parse(l));
    }
    ac.abort();
    expect(seen.find((e) => e.type === 'ADDED')?.object.metadata.name).toBe('d2');
    expect(seen.find((e) => e.type === 'BOOKMARK')?.object)
      .toEqual({ kind: 'Deployment', apiVersion: 'apps/v1', metadata: { resourceVersion: expect.any(String) } });

    kube.store.compact();
    const gone = await (await fetch(`${kube.url}/apis/apps/v1/namespaces/openfaas-fn/deployments?watch=true&resourceVersion=2`,
      { headers: { authorization: 'Bearer t0k' } })).text();
    expect(JSON.parse(gone.trim())).toEqual({ type: 'ERROR', object: expect.objectContaining({ kind: 'Status', code: 410, reason: 'Expired' }) });
  });

  it('resizes a pod in place through the resize subresource, and refuses other changes there', async () => {
    const pod = (await call('GET', '/api/v1/namespaces/openfaas-fn/pods?labelSelector=faas_function%3Dd1')).body.items[0];
    const path = `/api/v1/namespaces/openfaas-fn/pods/${pod.metadata.name}/resize`;
    const r = await call('PATCH', path, { spec: { containers: [{ name: 'd1', resources: { limits: { cpu: '500m' } } }] } },
      'application/strategic-merge-patch+json');
    expect(r.status).toBe(200);
    expect(r.body.spec.containers[0].resources.limits.cpu).toBe('500m');
    const reported = await eventually(async () =>
      (await call('GET', `/api/v1/namespaces/openfaas-fn/pods/${pod.metadata.name}`)).body.status.containerStatuses[0].resources?.limits?.cpu === '500m', 5000);
    expect(reported).toBe(true);
    const bad = await call('PATCH', path, { spec: { containers: [{ name: 'd1', image: 'other:1' }] } }, 'application/strategic-merge-patch+json');
    expect(bad.status).toBe(422);
  });

  it('schedules by node selector and GPU requests, and leaves an unfit pod Pending with the reason', async () => {
    await call('POST', '/apis/apps/v1/namespaces/openfaas-fn/deployments', {
      ...dep('gpu', 1, { resources: { limits: { 'nvidia.com/gpu': '1' } } }),
    });
    const node = await eventually(async () =>
      (await call('GET', '/api/v1/namespaces/openfaas-fn/pods?labelSelector=faas_function%3Dgpu')).body.items[0]?.spec.nodeName, 5000);
    expect(node).toBe('n2');
    const big = dep('huge', 1, { resources: { limits: { 'nvidia.com/gpu': '3' } } });
    await call('POST', '/apis/apps/v1/namespaces/openfaas-fn/deployments', big);
    const msg = await eventually(async () =>
      (await call('GET', '/api/v1/namespaces/openfaas-fn/pods?labelSelector=faas_function%3Dhuge')).body.items[0]?.status.conditions?.[0]?.message, 5000);
    expect(msg).toMatch(/0\/2 nodes are available: .*Insufficient nvidia.com\/gpu/);
  });

  it('evicts the pods of a node that goes NotReady, and the controller replaces them elsewhere', async () => {
    const pod = (await call('GET', '/api/v1/namespaces/openfaas-fn/pods?labelSelector=faas_function%3Dd1')).body.items[0];
    cluster.setNodeReady(pod.spec.nodeName, false);
    const moved = await eventually(async () => {
      const items = (await call('GET',
        '/api/v1/namespaces/openfaas-fn/pods?labelSelector=faas_function%3Dd1')).body.items as Array<{ spec: { nodeName: string };
        status: { conditions?: Array<{ type: string; status: string }> }; }>;
      return items.length === 1 && items[0].spec.nodeName !== pod.spec.nodeName &&
        items[0].status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
    }, 5000);
    expect(moved).toBe(true);
    cluster.setNodeReady(pod.spec.nodeName, true);
  });

  it('garbage-collects a deleted deployment\'s pods', async () => {
    await call('DELETE', '/apis/apps/v1/namespaces/openfaas-fn/deployments/d1');
    const gone = await eventually(async () =>
      (await call('GET', '/api/v1/namespaces/openfaas-fn/pods?labelSelector=faas_function%3Dd1')).body.items.length === 0, 5000);
    expect(gone).toBe(true);
  });

  it('records each request as RBAC sees it', () => {
    expect(kube.requests).toEqual(expect.arrayContaining([
      expect.objectContaining({ verb: 'create', resource: 'apps/deployments', namespace: 'openfaas-fn' }),
      expect.objectContaining({ verb: 'patch', resource: 'apps/deployments/scale', name: 'd1' }),
      expect.objectContaining({ verb: 'watch', resource: 'apps/deployments' }),
      expect.objectContaining({ verb: 'patch', resource: '/pods/resize' }),
    ]));
  });
});
