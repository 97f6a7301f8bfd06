/**
 * The Kubernetes provider under churn, against the fake API server's controller simulation:
 * a node going NotReady, a pod evicted, watches dropped while the history is compacted (410 Gone),
 * a scale racing an update (409 Conflict), and a server without the pod resize subresource.
 */
import { kubeConfig } from '../../gateway/providers/kubernetes/kube-config';
import { KubernetesProvider } from '../../gateway/providers/kubernetes/kubernetes-provider';
import { parseDeployment } from '../../gateway/registry/function-spec';
import { FakeCluster } from '../helpers/fake-kube/cluster';
import { FakeKube } from '../helpers/fake-kube/server';
import { aFunction } from '../helpers/fixtures';
import { eventually } from '../helpers/platform';

async function setup(opts: { podResize?: boolean; goneAs?: 'event' | 'status' } = {}) {
  const kube = new FakeKube({ token: 't', podResize: opts.podResize, goneAs: opts.goneAs });
  await kube.start();
  kube.store.create('v1/namespaces', undefined, { metadata: { name: 'openfaas-fn', annotations: { openfaas: '1' } } }, 'namespaces');
  const cluster = new FakeCluster(kube, { readyDelayMs: 30, evictAfterMs: 200 });
  cluster.addNode('n1');
  cluster.addNode('n2');
  cluster.start();
  const provider = new KubernetesProvider(kubeConfig({ server: kube.url, token: 't', insecure: true }), { version: { release: 't', sha: 't' } });
  await provider.start();
  const stop = async () => {
    await provider.close();
    await cluster.stop();
    await kube.stop();
  };
  return { kube, cluster, provider, stop };
}

const ref = { name: 'f', namespace: 'openfaas-fn' };
const readyIds = async (p: KubernetesProvider) => (await p.endpoints(ref)).filter((r) => r.state === 'ready').map((r) => r.id);

describe('kubernetes provider under churn', () => {
  let env: Awaited<ReturnType<typeof setup>>;
  beforeAll(async () => {
    env = await setup();
    await env.provider.deploy(parseDeployment(aFunction('f').minScale(2).build()));
  });
  afterAll(() => env.stop());

  it('sees replicas of a NotReady node go unready, and their replacements become ready', async () => {
    expect(await eventually(async () => (await readyIds(env.provider)).length === 2, 5000)).toBe(true);
    const eps = await env.provider.endpoints(ref);
    const node = eps[0].agent;
    const onNode = eps.filter((r) => r.agent === node).map((r) => r.id);
    env.cluster.setNodeReady(node, false);
    // at once: not ready (the balancer stops sending them traffic)
    expect(await eventually(async () => (await env.provider.endpoints(ref)).filter((r) => onNode.includes(r.id)).every((r) => r.state !== 'ready'), 3000))
      .toBe(true);
    // after the eviction: two ready replicas, none of them on the dead node
    const healed = await eventually(async () => {
      const now = (await env.provider.endpoints(ref)).filter((r) => r.state === 'ready');
      return now.length === 2 && now.every((r) => r.agent !== node);
    }, 5000);
    expect(healed).toBe(true);
    env.cluster.setNodeReady(node, true);
    expect((await env.provider.get(ref))!.availableReplicas).toBe(2);
  });

  it('stays current after its watches drop while history is compacted (relist on 410)', async () => {
    env.kube.store.compact();
    env.kube.dropWatches();
    await env.provider.scale(ref, 3);
    expect(await eventually(async () => (await readyIds(env.provider)).length === 3, 5000)).toBe(true);
  });

  it('notifies watchers of replica changes', async () => {
    const seen: string[] = [];
    const off = await env.provider.watch((c) => seen.push(`${c.kind}:${c.key}`));
    await env.provider.scale(ref, 1);
    expect(await eventually(() => seen.includes('replicas:openfaas-fn/f') && seen.includes('function:openfaas-fn/f'), 5000)).toBe(true);
    off();
  });

  it('retries an update that races a scale (409 Conflict) and keeps the count the scale set', async () => {
    const spec = parseDeployment(aFunction('f').minScale(1).env('V', '2').build());
    // a scale lands between the update's read and its write, once
    let raced = false;
    env.kube.beforeRequest = (r) => {
      if (raced || r.method !== 'PUT' || r.resource !== 'apps/deployments') return;
      raced = true;
      const d = env.kube.store.get('apps/v1/deployments', 'openfaas-fn', 'f')!;
      env.kube.store.update('apps/v1/deployments', 'openfaas-fn', 'f', { ...d, spec: { ...d.spec, replicas: 4 } }, 'deployments');
    };
    await env.provider.update(spec);
    env.kube.beforeRequest = undefined;
    const puts = env.kube.requests.filter((r) => r.method === 'PUT' && r.resource === 'apps/deployments').map((r) => r.status);
    // the raced write is refused, then retried until it lands once; on a busy machine the fake
    // controller's own status writes may refuse a retry too (as a real API server's would)
    expect(puts[0]).toBe(409);
    expect(puts.at(-1)).toBe(200);
    expect(puts.slice(0, -1).every((s) => s === 409)).toBe(true);
    const d = await env.provider.get(ref);
    expect(d!.envVars).toEqual({ V: '2' });
    expect(d!.replicas).toBe(4);
  });

  it('wakes a function from zero once, whoever else wakes it', async () => {
    await env.provider.scale(ref, 0);
    await Promise.all([env.provider.wake!(ref), env.provider.wake!(ref), env.provider.wake!(ref)]);
    expect((await env.provider.get(ref))!.replicas).toBe(1);
  });
});

describe('kubernetes provider: CPU quota by resize or by the node agent', () => {
  test.each([
    { podResize: true, want: '500m', says: /in-place pod resize/ },
    { podResize: false, want: '1', says: /node agent writing the pod cgroup/ },
  ])('podResize $podResize → limit $want', async ({ podResize, want, says }) => {
    const env = await setup({ podResize });
    try {
      await env.provider.deploy(parseDeployment({ ...aFunction('f').minScale(1).build(), limits: { cpu: '1' } }));
      expect(await eventually(async () => (await readyIds(env.provider)).length === 1, 5000)).toBe(true);
      const [id] = await readyIds(env.provider);
      await env.provider.setQuota(ref, id, 0.5);
      const pod = env.kube.store.get('v1/pods', 'openfaas-fn', id)!;
      expect((pod.spec!.containers as Array<{ resources: { limits: { cpu: string } } }>)[0].resources.limits.cpu).toBe(want);
      expect(pod.metadata.annotations!['mlfaas.io/quota']).toBe('0.5');
      expect(env.provider.enforcement().summary).toMatch(says);
      expect(env.kube.requests.some((r) => r.resource === '/pods/resize')).toBe(podResize);
    } finally {
      await env.stop();
    }
  });
});

describe('kubernetes provider: a compacted watch refused either way the API may refuse it', () => {
  test.each(['event', 'status'] as const)('410 Gone as %s: the watches relist and stay current', async (goneAs) => {
    const env = await setup({ goneAs });
    try {
      await env.provider.deploy(parseDeployment(aFunction('f').minScale(1).build()));
      expect(await eventually(async () => (await readyIds(env.provider)).length === 1, 5000)).toBe(true);
      env.kube.store.compact();
      env.kube.dropWatches();
      await env.provider.scale(ref, 2);
      expect(await eventually(async () => (await readyIds(env.provider)).length === 2, 5000)).toBe(true);
      const watches = env.kube.requests.filter((r) => r.verb === 'watch' && r.resource === '/pods');
      if (goneAs === 'status') expect(watches.some((r) => r.status === 410)).toBe(true);
    } finally {
      await env.stop();
    }
  });
});

describe('kubernetes provider: logs', () => {
  it('follows a function\'s pod logs, new replicas\' too, until the caller stops, with the pod as instance', async () => {
    const env = await setup();
    try {
      await env.provider.deploy(parseDeployment(aFunction('f').minScale(1).build()));
      const [id] = await eventually(async () => {
        const ids = await readyIds(env.provider);
        return ids.length === 1 ? ids : undefined;
      }, 5000) as string[];
      env.kube.appendLog('openfaas-fn', id, 'before');
      const ac = new AbortController();
      const seen: Array<{ instance: string; text: string; timestamp: string }> = [];
      const reading = (async () => {
        for await (const l of env.provider.logs(ref, { follow: true, signal: ac.signal })) {
          seen.push(l);
          if (seen.length === 2) ac.abort();
        }
      })();
      expect(await eventually(() => seen.length === 1, 5000)).toBe(true);
      // a replica that starts during the follow is followed too
      await env.provider.scale(ref, 2);
      const fresh = await eventually(async () => (await readyIds(env.provider)).find((x) => x !== id), 5000);
      expect(fresh).toBeDefined();
      env.kube.appendLog('openfaas-fn', fresh!, 'from the new one'); // kept from its start: read whenever its follow begins
      expect(await eventually(() => seen.length === 2, 5000)).toBe(true);
      await reading;
      expect(seen.map((l) => [l.instance, l.text])).toEqual([[id, 'before'], [fresh, 'from the new one']]);
      expect(seen[0].timestamp).toMatch(/^\d{4}-\d\d-\d\dT/);
    } finally {
      await env.stop();
    }
  });
});
