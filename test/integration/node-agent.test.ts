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
import { NODE_LIB_DIR, NODE_MPS_DIR, NODE_TOKEND_DIR, SM_PERCENT_ANNOTATION } from '../../gateway/providers/kubernetes/manifests';
import { cfsQuotaFor, findPodCgroup, NodeAgent, podPids, procEnviron } from '../../gateway/providers/kubernetes/node-agent';
import { type NodeGpu, startNodeGpu } from '../../gateway/providers/kubernetes/node-gpu';
import { discoverGpus } from '../../node-runtime/gpus';
import { createTokendControl } from '../../node-runtime/tokend-control';
import { buildDir, haveCuda, limiterSo, make, stubDir } from '../native/helpers';
import { ImageStore } from '../../gateway/providers/local/image-store';
import { parseDeployment } from '../../gateway/registry/function-spec';
import { FakeCluster } from '../helpers/fake-kube/cluster';
import { processRuntime } from '../helpers/fake-kube/process-runtime';
import { FakeKube } from '../helpers/fake-kube/server';
import { aFunction } from '../helpers/fixtures';
import { seedEchoHttp, seedImage } from '../helpers/images';
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
    agent = new NodeAgent(kc,
      { nodeName: 'node-a', cpuCgroupRoot: roots.cpu, cpuacctRoot: roots.cpuacct, gpus: 0, limiter: { from: lib, to: join(dir, 'node-lib') } });
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

/**
 * A GPU node (stub libcuda.so.1, MLFAAS_GPUS=stub:1): the node agent runs a real tokend, and a
 * fractional-GPU pod, a real CUDA client process under the limiter (LD_PRELOAD from the node's
 * hostPath, tokend's socket from the one the pod mounts), gets the autoscaler's quota on tokend's
 * GPU window: tokend's own statistics show the pod's process at that quota.
 */
(writable && haveCuda ? describe : describe.skip)('node agent on a GPU node: tokend under the agent (root, cgroup v1, stub driver)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mlfaas-node-gpu-'));
  const run = mkdtempSync('/tmp/ng-'); // short: unix socket paths stay under 108 bytes
  const roots = { cpu: join(CPU, `mlfaas-kube-gpu-${process.pid}`), cpuacct: join(ACCT, `mlfaas-kube-gpu-${process.pid}`) };
  const kube = new FakeKube({ token: 'ng', podResize: false });
  let cluster: FakeCluster;
  let provider: KubernetesProvider;
  let agent: NodeAgent;
  let gpu: NodeGpu | undefined;

  beforeAll(async () => {
    make('test-progs');
    const images = new ImageStore(join(dir, 'images'));
    seedImage(images, 'test/gpu-launch:1', {},
      { language: 'node', kind: 'inference', mode: 'http', fprocess: `${join(buildDir, 'prog_launch')} --seconds 120 --kernel-us 200` });
    mkdirSync(join(run, 'lib'), { recursive: true });
    await kube.start();
    kube.store.create('v1/namespaces', undefined, { metadata: { name: 'openfaas-fn', annotations: { openfaas: '1' } } }, 'namespaces');
    const hostPaths = { [NODE_LIB_DIR]: join(run, 'lib'), [NODE_TOKEND_DIR]: join(run, 'tokend'), [`${NODE_MPS_DIR}/pipe`]: join(run, 'mps', 'pipe') };
    cluster = new FakeCluster(kube, { readyDelayMs: 50, runtime: processRuntime(kube, images, roots, {}, hostPaths) });
    cluster.addNode('gpu-a', { labels: { 'mlfaas.io/vc': 'inference' }, gpus: 1 });
    cluster.start();
    const kc = kubeConfig({ server: kube.url, token: 'ng', insecure: true });
    provider = new KubernetesProvider(kc, { version: { release: 't', sha: 't' } });
    await provider.start();
    gpu = await startNodeGpu(discoverGpus({ kind: 'stub', count: 1 }),
      { tokendDir: join(run, 'tokend'), mpsDir: join(run, 'mps'), windowMs: 20, log: () => undefined, onRestart: () => agent.reapply() });
    // as on a node whose MPS daemon runs (the stub driver ignores the percentage: the restart is what is checked)
    agent = new NodeAgent(kc,
      { nodeName: 'gpu-a', cpuCgroupRoot: roots.cpu, cpuacctRoot: roots.cpuacct, gpus: 1, gpuQuota: gpu?.gpuQuota, mps: true,
        limiter: { from: limiterSo, to: join(run, 'lib') } });
    await agent.start();
  }, 120_000);
  afterAll(async () => {
    await agent?.stop();
    await gpu?.stop();
    await provider?.close();
    await cluster?.stop();
    await kube.stop();
    for (const r of Object.values(roots)) {
      for (const d of [join(r, 'kubepods', 'burstable'), join(r, 'kubepods', 'besteffort'), join(r, 'kubepods'), r]) {
        for (const e of existsSync(d) ? readdirSync(d).filter((x) => x.startsWith('pod')) : []) rmdirSafe(join(d, e));
        rmdirSafe(d);
      }
    }
    rmSync(dir, { recursive: true, force: true });
    rmSync(run, { recursive: true, force: true });
  });

  it('starts tokend with a window per GPU and says MPS is not used without its control program', async () => {
    expect(gpu).toBeDefined();
    expect(gpu!.describe).toMatch(/1 GPU\(s\) \(stub\); tokend window 20 ms/);
    expect(gpu!.describe).toMatch(/MPS not started \(no nvidia-cuda-mps-control on PATH\): SM shares are not enforced/);
    expect(gpu!.mps).toBe(false);
    expect((await createTokendControl(gpu!.tokend.controlPath).stats()).gpus).toBe(1);
  });

  it('puts a fractional-GPU pod\'s processes at the autoscaler\'s quota on tokend\'s GPU window', async () => {
    const fn = aFunction('g').image('test/gpu-launch:1').label('mlfaas.gpu', '1').label('mlfaas.gpu.sm_share', '0.5').minScale(1).build();
    // a deploy may not set LD_* (reserved); the stub driver stands in for a GPU node's libcuda,
    // which a real image finds on its default library path
    const spec = parseDeployment({ ...fn, limits: { cpu: '1' } });
    await provider.deploy({ ...spec, envVars: { ...spec.envVars, LD_LIBRARY_PATH: stubDir } });
    const pod = await eventually(() => kube.store.list('v1/pods', 'openfaas-fn').find((p) => p.status?.phase === 'Running'), 20_000);
    expect(pod).toBeDefined();
    const env = Object.fromEntries(((pod!.spec!.containers as Array<{ env: Array<{ name: string; value?: string }> }>)[0].env).map((e) => [e.name, e.value]));
    expect(env)
      .toEqual(expect.objectContaining({ LD_PRELOAD: `${NODE_LIB_DIR}/libmlfaas_limiter.so`, MLFAAS_TOKEND_SOCKET: `${NODE_TOKEND_DIR}/tokend.sock` }));
    expect(pod!.metadata.annotations?.[SM_PERCENT_ANNOTATION]).toBe('50'); // CUDA_MPS_ACTIVE_THREAD_PERCENTAGE's source
    const control = createTokendControl(gpu!.tokend.controlPath);
    const client = async () => (await control.stats()).clients.find((c) => c.device === 'gpu0');
    expect(await eventually(client, 15_000)).toBeDefined(); // the limiter in the pod connected to the node's tokend
    await provider.setQuota({ name: 'g', namespace: 'openfaas-fn' }, pod!.metadata.name!, 0.3);
    // no MPS control daemon on this node: the 50 % in the pod's environment limits nothing, and the
    // limiter reports no share (tokend counts plain device time)
    const at = await eventually(async () => {
      const c = await client();
      return c && Math.abs(c.limit - 0.3) < 1e-6 ? c : undefined;
    }, 10_000);
    expect(at).toEqual(expect.objectContaining({ device: 'gpu0', smShare: 1, request: expect.closeTo(0.3, 6), limit: expect.closeTo(0.3, 6) }));
    const group = findPodCgroup(roots.cpu, pod!.metadata.uid!)!;
    expect(podPids(group)).toContain(at!.pid); // the client is the pod's own process
    expect(procEnviron(at!.pid).CUDA_MPS_ACTIVE_THREAD_PERCENTAGE).toBe('50'); // read from the annotation at start
  }, 60_000);

  it('a new SM share (the pod annotation) makes the node agent restart the container running at the old one, counted', async () => {
    const ref = { name: 'g', namespace: 'openfaas-fn' };
    const pod = kube.store.list('v1/pods', 'openfaas-fn').find((p) => p.status?.phase === 'Running')!;
    const pids = podPids(findPodCgroup(roots.cpu, pod.metadata.uid!)!);
    expect(pids.length).toBeGreaterThan(0);
    // not declared to run MPS: refused, and enforcement() does not claim it
    await expect(provider.setSmShare(ref, pod.metadata.name!, 0.25)).rejects.toThrow(/not enforced here/);
    expect(provider.enforcement().gpu?.smShare).toBe('none');
    const mpsProvider = new KubernetesProvider(kubeConfig({ server: kube.url, token: 'ng', insecure: true }),
      { version: { release: 't', sha: 't' }, gpuMps: true });
    await mpsProvider.start();
    try {
      expect(mpsProvider.enforcement().gpu?.smShare).toBe('mps');
      await mpsProvider.setSmShare(ref, pod.metadata.name!, 0.25);
      expect((await mpsProvider.endpoints(ref)).find((r) => r.id === pod.metadata.name)?.smShare).toBe(0.25);
      const gone = await eventually(() => pids.every((pid) => !existsSync(`/proc/${pid}`)), 10_000);
      expect(gone).toBe(true);
      const metrics = await (await fetch(`${agent.url}/metrics`)).text();
      expect(metrics).toMatch(/mlfaas_node_sm_share_restarts_total\{namespace="openfaas-fn",function="g"\} 1/);
    } finally {
      await mpsProvider.close();
    }
  }, 30_000);
});

function rmdirSafe(d: string): void {
  try {
    rmdirSync(d);
  } catch {
    // not empty or gone
  }
}
