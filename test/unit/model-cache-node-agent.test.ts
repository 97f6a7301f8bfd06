/**
 * Models by URI on Kubernetes (issue 25, part 4): the node agent keeps the node's hostPath model
 * cache within MLFAAS_MODEL_CACHE_BYTES by the same LRU policy as the local agent's cache, and
 * never evicts a version a pod on its node mounts, as the (fake) API server lists them: through a
 * rolling update from one version to another, and not on the word of pods on other nodes. When
 * the API server cannot be read, nothing is evicted.
 */
import { CoreV1Api } from '@kubernetes/client-node';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { kubeConfig } from '../../gateway/providers/kubernetes/kube-config';
import { KubernetesProvider } from '../../gateway/providers/kubernetes/kubernetes-provider';
import { modelVersionsMounted, NODE_MODEL_CACHE_DIR } from '../../gateway/providers/kubernetes/model-init';
import { NodeAgent } from '../../gateway/providers/kubernetes/node-agent';
import { NodeModelCache } from '../../gateway/providers/kubernetes/node-model-cache';
import { parseDeployment } from '../../gateway/registry/function-spec';
import { FakeCluster } from '../helpers/fake-kube/cluster';
import { FakeKube } from '../helpers/fake-kube/server';
import { aFunction } from '../helpers/fixtures';
import { eventually } from '../helpers/platform';

const sha = (s: string) => createHash('sha256').update(s).digest('hex');
const NS = 'openfaas-fn';

/** A cached version of `bytes` bytes last used `agoS` seconds ago, as a fetch init container leaves it. */
function cached(dir: string, digest: string, bytes: number, agoS: number): void {
  mkdirSync(join(dir, digest), { recursive: true });
  writeFileSync(join(dir, digest, 'model.onnx'), Buffer.alloc(bytes, 1));
  const t = new Date(Date.now() - agoS * 1000);
  utimesSync(join(dir, digest), t, t);
}
const versions = (dir: string) => readdirSync(dir).filter((n) => /^[0-9a-f]{64}$/.test(n)).sort();
const pod = (name: string, node: string, digest: string, phase = 'Running') => ({
  metadata: { name, namespace: NS }, spec: { nodeName: node, containers: [{ name: 'c', image: 'x' }],
    volumes: [{ name: 'mlfaas-model', hostPath: { path: `${NODE_MODEL_CACHE_DIR}/${digest}`, type: 'DirectoryOrCreate' } }] }, status: { phase },
});

describe('modelVersionsMounted', () => {
  test('versions under the cache hostPath, of pods that have not finished', () => {
    const [a, b, c] = [sha('a'), sha('b'), sha('c')];
    const pods = [pod('p1', 'n', a), pod('p2', 'n', b, 'Pending'), pod('p3', 'n', c, 'Succeeded'), pod('p4', 'n', c, 'Failed'),
      { metadata: { name: 'p5' }, spec: { containers: [], volumes: [{ name: 'x', hostPath: { path: `/elsewhere/${c}` } }, { name: 'e', emptyDir: {} }] } },
      { metadata: { name: 'p6' }, spec: { containers: [], volumes: [{ name: 'x', hostPath: { path: `${NODE_MODEL_CACHE_DIR}/${c}/` } }] } },
      { metadata: { name: 'p7' }, spec: { containers: [], volumes: [{ name: 'x', hostPath: { path: `${NODE_MODEL_CACHE_DIR}/not-a-sha` } }] } }];
    expect([...modelVersionsMounted(pods as never)].sort()).toEqual([a, b, c].sort());
    expect(modelVersionsMounted([pod('p', 'n', a)] as never, '/other/cache').size).toBe(0);
  });
});

describe('the node agent evicts from the node\'s model cache (fake API server)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mlfaas-node-models-'));
  const cache = join(dir, 'model-cache');
  const kube = new FakeKube({ token: 'nm' });
  let kc: ReturnType<typeof kubeConfig>;
  let cluster: FakeCluster;
  let provider: KubernetesProvider;
  let agent: NodeAgent;
  const [v1, v2, v3, v4, v5] = ['v1', 'v2', 'v3', 'v4', 'v5'].map(sha);
  const logs: string[] = [];

  beforeAll(async () => {
    await kube.start();
    kube.store.create('v1/namespaces', undefined, { metadata: { name: NS, annotations: { openfaas: '1' } } }, 'namespaces');
    cluster = new FakeCluster(kube, { readyDelayMs: 20 });
    cluster.addNode('node-a');
    cluster.start();
    kc = kubeConfig({ server: kube.url, token: 'nm', insecure: true });
    const k = kc;
    provider = new KubernetesProvider(k, { version: { release: 't', sha: 't' } });
    await provider.start();
    mkdirSync(cache);
    // sweeps run when the test says (sweep()), not on their timers
    agent = new NodeAgent(k, { nodeName: 'node-a', cpuCgroupRoot: join(dir, 'no-cgroups'), gpus: 0, log: (l) => logs.push(l),
      modelCache: { dir: cache, maxBytes: 2500, sweepMs: 600_000, settleMs: 600_000, minIdleMs: 0 } });
    await agent.start();
  });
  afterAll(async () => {
    await agent?.stop();
    await provider?.close();
    await cluster?.stop();
    await kube.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const mountedOnA = async () => {
    const pods = (await kc.makeApiClient(CoreV1Api).listNamespacedPod({ namespace: NS, fieldSelector: 'spec.nodeName=node-a' })).items;
    return modelVersionsMounted(pods);
  };
  const fn = (digest: string) => parseDeployment(aFunction('m').minScale(2).annotation('mlfaas.model.uri', 'https://models.example/m.onnx')
    .annotation('mlfaas.model.sha256', digest).build());

  test('LRU within the limit, never a version a pod on the node mounts; through a rolling update', async () => {
    // v1 is the oldest version in the cache and the one the function's pods (on node-a) mount
    cached(cache, v1, 1000, 400);
    cached(cache, v2, 1000, 300);
    cached(cache, v3, 1000, 200);
    cached(cache, v4, 1000, 100);
    await provider.deploy(fn(v1));
    expect(await eventually(async () => [...await mountedOnA()].join() === v1, 15_000)).toBe(true);
    // a pod on another node mounting v2 does not keep it on this one
    kube.store.create('v1/pods', NS, pod('elsewhere', 'node-b', v2), 'pods');

    const first = await agent.modelCache!.sweep();
    expect(first?.evict).toEqual([v2, v3]); // 4000 bytes > 2500: the least recently used idle versions go, v1 (older) stays
    expect(versions(cache)).toEqual([v1, v4].sort());
    expect(first).toMatchObject({ totalBytes: 4000, keptBytes: 2000, overBytes: 0 });

    // a new version by URI: its fetch init containers put it in the cache, the Deployment rolls
    await provider.update(fn(v5));
    cached(cache, v5, 1000, 0);
    expect(await eventually(async () => {
      const m = await mountedOnA();
      return m.has(v5) && !m.has(v1);
    }, 20_000)).toBe(true);
    // v1 was seen in use at the first sweep (its last use); v4 has not been used since: v4 goes, v1 stays (3000 > 2500)
    const second = await agent.modelCache!.sweep();
    expect(second?.evict).toEqual([v4]);
    expect(versions(cache)).toEqual([v1, v5].sort());
    const metrics = await (await fetch(`${agent.url}/metrics`)).text();
    expect(metrics).toMatch(/mlfaas_node_model_evictions_total 3/);
    expect(metrics).toMatch(/mlfaas_node_model_cache_bytes 2000/);
    expect(logs.filter((l) => /evicted from the node's model cache/.test(l))).toHaveLength(3);
  }, 60_000);

  test('over the limit with every version in use: nothing is evicted, and it says so', async () => {
    // both v1 and v5 mounted by pods on this node, a third version (v3) fetched for another function: 3000 > 2500 bytes
    kube.store.create('v1/pods', NS, pod('old-one', 'node-a', v1), 'pods');
    kube.store.create('v1/pods', NS, pod('other', 'node-a', v3, 'Pending'), 'pods');
    cached(cache, v3, 1000, 500);
    const plan = await agent.modelCache!.sweep();
    expect(plan).toMatchObject({ evict: [], keptBytes: 3000, overBytes: 500 });
    expect(versions(cache)).toEqual([v1, v3, v5].sort());
    expect(logs.some((l) => /above its limit 2500: the rest is in use/.test(l))).toBe(true);
  });

  test('a version used within minIdleMs is not evicted; a fetch in flight (its temp file) neither', async () => {
    const nm = new NodeModelCache(kc.makeApiClient(CoreV1Api), 'node-a', { dir: cache, maxBytes: 1, minIdleMs: 60_000 }, new Registry());
    cached(cache, v2, 1000, 10); // fetched 10 s ago, not (yet) seen mounted
    cached(cache, v4, 1000, 3600);
    writeFileSync(join(cache, v4, '.tmp-pod-1'), 'partial'); // an init container fetching v4 again
    const plan = await nm.sweep();
    expect(plan?.evict).toEqual([]);
    expect(versions(cache)).toEqual([v1, v2, v3, v4, v5].sort());
  });

  test('the API server cannot be read: nothing is evicted', async () => {
    const bad = kubeConfig({ server: kube.url, token: 'wrong', insecure: true }).makeApiClient(CoreV1Api);
    const said: string[] = [];
    const nm = new NodeModelCache(bad, 'node-a', { dir: cache, maxBytes: 1, minIdleMs: 0 }, new Registry(), (l) => said.push(l));
    expect(await nm.sweep()).toBeUndefined();
    expect(versions(cache)).toEqual([v1, v2, v3, v4, v5].sort());
    expect(said.join('\n')).toMatch(/cannot list this node's pods \(HTTP 401\); nothing evicted/);
    // the same cache with a working client evicts the idle versions down to the limit
    const good = new NodeModelCache(kc.makeApiClient(CoreV1Api), 'node-a', { dir: cache, maxBytes: 1, minIdleMs: 0 }, new Registry());
    rmSync(join(cache, v4, '.tmp-pod-1'));
    expect((await good.sweep())?.evict.sort()).toEqual([v2, v4].sort());
    expect(existsSync(join(cache, v1))).toBe(true);
  });
});
