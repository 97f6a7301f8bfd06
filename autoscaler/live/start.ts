import { cpus } from 'node:os';
import type Redis from 'ioredis';
import type { Config } from '../../gateway/config';
import type { FunctionProvider } from '../../gateway/providers/function-provider';
import { LiveAutoscaler } from './live-autoscaler';

/** The node's devices as the autoscaler sees them: one per core on a machine without a GPU. */
export function localDevices(): string[] {
  return cpus().map((_, i) => `cpu${i}`);
}

/** Starts the live inference autoscaler with the configured policy (leader-elected in Redis). */
export async function startAutoscaler(cfg: Config, redis: Redis, provider: FunctionProvider): Promise<LiveAutoscaler> {
  const a = new LiveAutoscaler(redis, provider, {
    policy: cfg.autoscaler.policy,
    params: cfg.autoscaler.params,
    intervalMs: cfg.autoscaler.intervalMs,
    defaultSloMs: cfg.autoscaler.defaultSloMs,
    devices: localDevices(),
    // seconds over the SLO before the SLO guard acts (slo-guard.ts); read here, not in config.ts
    sloGuardS: Math.max(1, Number(process.env.MLFAAS_SLO_GUARD_S) || 5),
  });
  await a.start();
  return a;
}
