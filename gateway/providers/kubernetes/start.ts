/**
 * The gateway's Kubernetes provider (MLFAAS_PROVIDER=kubernetes), loaded only then: client-node
 * is not imported by a gateway running the local provider.
 */
import type Redis from 'ioredis';
import type { Config } from '../../config';
import type { FunctionProvider } from '../function-provider';
import { readProfile } from '../local/profiler';

export async function startKubernetesProvider(cfg: Config, redis: Redis): Promise<FunctionProvider> {
  const { kubeConfig } = await import('./kube-config');
  const { KubernetesProvider } = await import('./kubernetes-provider');
  const p = new KubernetesProvider(kubeConfig(cfg.kube), { version: cfg.version, profiles: (ref) => readProfile(redis, ref) });
  await p.start();
  return p;
}
