/**
 * The node agent on a (fake) Kubernetes node whose kubelet runs pods as real processes in their own
 * cgroups: it finds each pod's group as a kubelet makes it, writes the autoscaler's quota into the
 * kernel's CFS quota where the API server cannot resize pods in place (Kubernetes < 1.33), reports
 * usage and capacity over HTTP, and installs the limiter library for fractional-GPU pods.
 * Needs root and a writable cgroup v1 cpu hierarchy (what CI has); says so and skips otherwise.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { kubeConfig } from '../../gateway/providers/kubernetes/kube-config';
import { KubernetesProvider } from '../../gateway/providers/kubernetes/kubernetes-provider';
import { cfsQuotaFor, findPodCgroup, NodeAgent } from '../../gateway/providers/kubernetes/node-agent';
import { ImageStore } from '../../gateway/providers/local/image-store';
import { parseDeployment } from '../../gateway/registry/function-spec';
import { FakeCluster } from '../helpers/fake-kube/cluster';
import { processRuntime } from '../helpers/fake-kube/process-runtime';
import { FakeKube } from '../helpers/fake-kube/server';
import { aFunction } from '../helpers/fixtures';
import { seedEchoHttp } from '../helpers/images';
import { eventually } from '../helpers/platform';

const CPU = '/sys/fs/cgroup/cpu';
const ACCT = '/sys/fs/cgroup/cpuacct';
const writable = (() => {
  try {
    const d = join(CPU, `mlfaas-probe-${process.pid}`);
    mkdirSync(d);
    rmdirSync(d);
    return existsSync(join(CPU, 'cpu.cfs_quota_us'));
  } catch {
    return false;
  }
})();

describe('findPodCgroup and cfsQuotaFor', () => {
  const root = mkdtempSync(join(tmpdir(), 'cg-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  test.each([
    { layout: 'kubepods/burstable/podabc-1', uid: 'abc-1' }, // cgroupfs driver
    { layout: 'kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-podabc_2.slice', uid: 'abc-2' }, // systemd driver
    { layout: 'kubepods/podabc-3', uid: 'abc-3' }, // guaranteed QoS
  ])('$layout', ({ layout, uid }) => {
    mkdirSync(join(root, layout), { recursive: true });
    expect(findPodCgroup(root, uid)).toBe(join(root, layout));
  });
  test.each([
    { quota: 0.25, base: '1', cores: 8, want: 25_000 },
    { quota: 0.5, base: '500m', cores: 8, want: 25_000 },
    { quota: 0.5, base: undefined, cores: 2, want: 100_000 },
  ])('quota $quota of $base (node $cores cores) → $want µs', ({ quota, base, cores, want }) => {
    expect(cfsQuotaFor(quota, base, cores)).toBe(want);
  });
});

(writable ? describe : describe.skip)('node agent on a fake node (root, cgroup v1)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mlfaas-node-agent-'));
  const roots = { cpu: join(CPU, `mlfaas-kube-test-${process.pid}`), cpuacct: join(ACCT, `mlfaas-kube-test-${process.pid}`) };
  const kube = new FakeKube({ token: 'na', podResize: false });
  let cluster: FakeCluster;
  let provider: KubernetesProvider;
  let agent: NodeAgent;
  const lib = join(dir, 'liblimiter.so');

  beforeAll(async () => {
    const images = new ImageStore(join(dir, 'images'));
    seedEchoHttp(images);
    writeFileSync(lib, 'not really a library');
    await kube.start();
    kube.store.create('v1/namespaces', undefined, { metadata: { name: 'openfaas-fn', annotations: { openfaas: '1' } } }, 'namespaces');
    cluster = new FakeCluster(kube, { readyDelayMs: 50, runtime: processRuntime(kube, images, roots) });
    cluster.addNode('node-a');
    cluster.start();
    const kc = kubeConfig({ server: kube.url, token: 'na', insecure: true });
    provider = new KubernetesProvider(kc, { version: { release: 't', sha: 't' } });
    await provider.start();
    agent = new NodeAgent(kc, { nodeName: 'node-a', cpuCgroupRoot: roots.cpu, cpuacctRoot: roots.cpuacct, gpus: 0, limiter: { from: lib, to: join(dir, 'node-lib') } });
    await agent.start();
  });
  afterAll(async () => {
    await agent?.stop();
    await provider?.close();
    await cluster?.stop();
    await kube.stop();
    for (const r of Object.values(roots)) {
      for (const d of [join(r, 'kubepods', 'burstable'), join(r, 'kubepods'), r]) {
        for (const e of existsSync(d) ? readdirSync(d).filter((x) => x.startsWith('pod')) : []) rmdirSafe(join(d, e));
        rmdirSafe(d);
      }
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it('writes the autoscaler\'s quota into the pod\'s CFS quota when pods cannot be resized in place', async () => {
    await provider.deploy(parseDeployment({ ...aFunction('f').minScale(1).build(), limits: { cpu: '1' } }));
    const ref = { name: 'f', namespace: 'openfaas-fn' };
    const ready = await eventually(async () => (await provider.endpoints(ref)).find((r) => r.state === 'ready'), 15000);
    expect(ready).toBeDefined();
    const uid = kube.store.get('v1/pods', 'openfaas-fn', ready!.id)!.metadata.uid!;
    const quotaFile = join(roots.cpu, 'kubepods', 'burstable', `pod${uid}`, 'cpu.cfs_quota_us');
    expect(readFileSync(quotaFile, 'utf8').trim()).toBe('100000'); // the kubelet applied limits.cpu 1
    await provider.setQuota(ref, ready!.id, 0.25);
    expect(provider.enforcement().summary).toMatch(/node agent writing the pod cgroup/);
    expect(await eventually(() => readFileSync(quotaFile, 'utf8').trim() === '25000', 5000)).toBe(true);
    const metrics = await (await fetch(`${agent.url}/metrics`)).text();
    expect(metrics).toMatch(new RegExp(`mlfaas_node_replica_quota\\{namespace="openfaas-fn",pod="${ready!.id}",function="f"\\} 0.25`));
    expect(metrics).toMatch(/mlfaas_node_replica_cpu_seconds\{[^}]*function="f"\} \d/);
  });

  it('reports capacity and installs the limiter library where pods mount it', async () => {
    expect(await (await fetch(`${agent.url}/capacity`)).json()).toEqual({ node: 'node-a', cpus: expect.any(Number), gpus: 0 });
    expect(readFileSync(join(dir, 'node-lib', 'libmlfaas_limiter.so'), 'utf8')).toBe('not really a library');
  });
});

function rmdirSafe(d: string): void {
  try {
    rmdirSync(d);
  } catch {
    // not empty or gone
  }
}
