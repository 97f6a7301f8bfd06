/**
 * The gateway's Kubernetes provider (MLFAAS_PROVIDER=kubernetes) and the node agent, loaded only
 * then: client-node is not imported by a gateway running the local provider.
 */
import type Redis from 'ioredis';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { type Config, REPO_ROOT } from '../../config';
import type { FunctionProvider } from '../function-provider';
import type { TrainingCapacity } from '../../jobs/training-capacity';
import type { TrainingSource } from '../../jobs/training-source';
import { discoverGpus } from '../../../node-runtime/gpus';
import { readProfile } from '../../../node-runtime/profiler';
import type { LoanPolicy } from '../../ports/loans';
import type { LeaderLease } from './kube-lease';
import type { NodeAgent } from './node-agent';

/**
 * Loads a module of the Kubernetes side when it is first used. `require`, not `import()`: the
 * mlfaas command runs TypeScript through tsx's CommonJS hook, which a dynamic import() bypasses
 * (it fails with "Cannot find module" in a real process, though not under Jest).
 */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const load = <T>(id: string): T => require(id) as T;

export async function startKubernetesProvider(cfg: Config, redis: Redis): Promise<FunctionProvider> {
  const { kubeConfig } = load<typeof import('./kube-config')>('./kube-config');
  const { KubernetesProvider } = load<typeof import('./kubernetes-provider')>('./kubernetes-provider');
  const { registryImages } = load<typeof import('./registry-images')>('./registry-images');
  const images = cfg.kubeImages.check === 'registry' ? registryImages({ insecure: cfg.kubeImages.insecure, timeoutMs: 10_000 }) : undefined;
  // in the fixed-cluster mode the autoscaler's placement chooses each inference pod's node and GPU (placement-gate.ts);
  // the gateway runs with MLFAAS_AUTOSCALER=false there (the autoscaler is its own Deployment): the capacity alone decides
  const placementGate = !!cfg.autoscaler.cluster;
  const p = new KubernetesProvider(kubeConfig(cfg.kube), { version: cfg.version, profiles: (ref) => readProfile(redis, ref), images, gpuMps: cfg.kubeGpuMps,
    placementGate });
  await p.start();
  return p;
}

/** The fixed-cluster placement's gate opener against the configured cluster (placement-gate.ts); `place` is the autoscaler's policy. */
export function kubePlacementGate(cfg: Config, place: import('./placement-gate').PlaceFn): import('./placement-gate').PlacementGate {
  const { kubeConfig } = load<typeof import('./kube-config')>('./kube-config');
  const { PlacementGate } = load<typeof import('./placement-gate')>('./placement-gate');
  return new PlacementGate(kubeConfig(cfg.kube), place);
}

/** Training on the cluster: jobs as pods on the training virtual cluster's nodes, profiles as pods. */
export async function startKubeTraining(cfg: Config, redis: Redis, provider: FunctionProvider): Promise<{ source: TrainingSource; capacity: TrainingCapacity;
  manageNodes(loans: LoanPolicy): Promise<void>; }> {
  const { kubeConfig } = load<typeof import('./kube-config')>('./kube-config');
  const { KubeTrainingFunctions, kubeTrainingCapacity } = load<typeof import('./kube-training')>('./kube-training');
  const { CoreV1Api } = load<typeof import('@kubernetes/client-node')>('@kubernetes/client-node');
  const kc = kubeConfig(cfg.kube);
  const core = kc.makeApiClient(CoreV1Api);
  const capacity = kubeTrainingCapacity(core, cfg.training.slots);
  const source = new KubeTrainingFunctions(kc, core, redis, provider, capacity,
    { checkpointClaim: cfg.training.checkpointClaim, profileTimeoutMs: cfg.training.profileTimeoutMs });
  const { manageVirtualClusters } = load<typeof import('./vc-manager')>('./vc-manager');
  // FaPES: loan idle inference nodes (labelled mlfaas.io/home-vc=inference) to training, reclaim them under load
  const manageNodes = async (loans: LoanPolicy) => {
    const r = await manageVirtualClusters(core, loans);
    for (const m of r?.moves ?? [])
      process.stderr.write(`[mlfaas] virtual clusters: ${m.node} ${m.from ?? '-'} → ${m.to} (inference needs ${r!.demand} ` +
        `node(s); ${r!.decision.reason}; evicted ${m.evicted.length} pod(s))\n`);
  };
  return { source, capacity, manageNodes };
}

/** The cluster's nodes, read per call, for `GET /system/nodes` (devices, virtual clusters, loans). */
export function kubeNodeFacts(cfg: Config): () => Promise<import('../../routes/nodes-model').ClusterNodeFacts[]> {
  const { kubeConfig } = load<typeof import('./kube-config')>('./kube-config');
  const { CoreV1Api } = load<typeof import('@kubernetes/client-node')>('@kubernetes/client-node');
  const { listNodeFacts } = load<typeof import('./node-facts')>('./node-facts');
  const core = kubeConfig(cfg.kube).makeApiClient(CoreV1Api);
  return () => listNodeFacts(core);
}

/**
 * `mlfaas node-agent` on a Kubernetes node: cgroup v1 (`/sys/fs/cgroup/cpu`) or v2
 * (`/sys/fs/cgroup`); on a GPU node also tokend and the MPS control daemon (`node-gpu.ts`).
 * `MLFAAS_NODE_RUN_DIR` moves their folders from /var/run/mlfaas (tests).
 */
export async function startNodeAgent(cfg: Config, nodeName: string, port: number, log: (l: string) => void): Promise<{ agent: NodeAgent;
  stop(): Promise<void>; }> {
  const { kubeConfig } = load<typeof import('./kube-config')>('./kube-config');
  const { NodeAgent } = load<typeof import('./node-agent')>('./node-agent');
  const { NODE_LIB_DIR, NODE_MPS_DIR, NODE_TOKEND_DIR } = load<typeof import('./manifests')>('./manifests');
  const { startNodeGpu } = load<typeof import('./node-gpu')>('./node-gpu');
  const { NODE_MODEL_CACHE_DIR } = load<typeof import('./model-init')>('./model-init');
  const v1 = existsSync('/sys/fs/cgroup/cpu/cpu.cfs_quota_us');
  const gpus = discoverGpus(cfg.gpus);
  const run = process.env.MLFAAS_NODE_RUN_DIR;
  let agent: NodeAgent | undefined;
  const gpu = cfg.tokend
    ? await startNodeGpu(gpus, {
      tokendDir: run ? join(run, 'tokend') : NODE_TOKEND_DIR,
      mpsDir: run ? join(run, 'mps') : NODE_MPS_DIR,
      windowMs: cfg.tokendWindowMs,
      log,
      onRestart: () => agent?.reapply(),
    })
    : undefined;
  agent = new NodeAgent(kubeConfig(cfg.kube), {
    nodeName,
    cpuCgroupRoot: v1 ? '/sys/fs/cgroup/cpu' : '/sys/fs/cgroup',
    cpuacctRoot: v1 ? '/sys/fs/cgroup/cpuacct' : '/sys/fs/cgroup',
    gpus: gpus.gpus.length,
    gpuQuota: gpu?.gpuQuota,
    mps: gpu?.mps,
    limiter: { from: join(REPO_ROOT, 'native', 'build', 'liblimiter.so'), to: NODE_LIB_DIR },
    modelCache: { dir: NODE_MODEL_CACHE_DIR, maxBytes: cfg.modelCacheBytes },
    port,
    log,
  });
  await agent.start();
  const a = agent;
  return {
    agent: a,
    async stop() {
      await a.stop();
      await gpu?.stop();
    },
  };
}

/** The autoscaler's leader Lease in the namespace it runs in (POD_NAMESPACE, default mlfaas). */
export async function kubeLeader(cfg: Config, name = 'mlfaas-autoscaler'): Promise<LeaderLease> {
  const { kubeConfig } = load<typeof import('./kube-config')>('./kube-config');
  const { KubeLease } = load<typeof import('./kube-lease')>('./kube-lease');
  const { CoordinationV1Api } = load<typeof import('@kubernetes/client-node')>('@kubernetes/client-node');
  return new KubeLease(kubeConfig(cfg.kube).makeApiClient(CoordinationV1Api), process.env.POD_NAMESPACE ?? 'mlfaas', name, 5000);
}
