/**
 * The gateway's Kubernetes provider (MLFAAS_PROVIDER=kubernetes) and the node agent, loaded only
 * then: client-node is not imported by a gateway running the local provider.
 */
import type Redis from 'ioredis';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { type Config, REPO_ROOT } from '../../config';
import type { FunctionProvider } from '../function-provider';
import { discoverGpus } from '../local/gpus';
import { readProfile } from '../local/profiler';
import type { LeaderLease } from './kube-lease';
import type { NodeAgent } from './node-agent';

export async function startKubernetesProvider(cfg: Config, redis: Redis): Promise<FunctionProvider> {
  const { kubeConfig } = await import('./kube-config');
  const { KubernetesProvider } = await import('./kubernetes-provider');
  const p = new KubernetesProvider(kubeConfig(cfg.kube), { version: cfg.version, profiles: (ref) => readProfile(redis, ref) });
  await p.start();
  return p;
}

/** `mlfaas node-agent` on a Kubernetes node: cgroup v1 (`/sys/fs/cgroup/cpu`) or v2 (`/sys/fs/cgroup`). */
export async function startNodeAgent(cfg: Config, nodeName: string, port: number, log: (l: string) => void): Promise<NodeAgent> {
  const { kubeConfig } = await import('./kube-config');
  const { NodeAgent } = await import('./node-agent');
  const { NODE_LIB_DIR } = await import('./manifests');
  const v1 = existsSync('/sys/fs/cgroup/cpu/cpu.cfs_quota_us');
  const gpus = discoverGpus(cfg.gpus).gpus.length;
  const agent = new NodeAgent(kubeConfig(cfg.kube), {
    nodeName,
    cpuCgroupRoot: v1 ? '/sys/fs/cgroup/cpu' : '/sys/fs/cgroup',
    cpuacctRoot: v1 ? '/sys/fs/cgroup/cpuacct' : '/sys/fs/cgroup',
    gpus,
    limiter: { from: join(REPO_ROOT, 'native', 'build', 'liblimiter.so'), to: NODE_LIB_DIR },
    port,
    log,
  });
  await agent.start();
  return agent;
}

/** The autoscaler's leader Lease in the namespace it runs in (POD_NAMESPACE, default mlfaas). */
export async function kubeLeader(cfg: Config, name = 'mlfaas-autoscaler'): Promise<LeaderLease> {
  const { kubeConfig } = await import('./kube-config');
  const { KubeLease } = await import('./kube-lease');
  const { CoordinationV1Api } = await import('@kubernetes/client-node');
  return new KubeLease(kubeConfig(cfg.kube).makeApiClient(CoordinationV1Api), process.env.POD_NAMESPACE ?? 'mlfaas', name, 5000);
}
