import { cpus } from 'node:os';
import type Redis from 'ioredis';
import type { Config } from '../../gateway/config';
import type { SlotNoun } from '../../gateway/jobs/admission-answer';
import type { FunctionProvider } from '../../gateway/providers/function-provider';
import type { LeaderLease } from '../../gateway/providers/kubernetes/kube-lease';
import { LiveAutoscaler } from './live-autoscaler';
import type { JobBook, JobLauncher } from '../../gateway/ports/training-jobs';
import type { TrainingCapacity } from '../../gateway/jobs/training-capacity';
import { TrainingLoop } from './training-loop';
import { type Clock, systemClock } from '../../gateway/ports/clock';
import { ClusterAutoscaler, createClusterController } from '../multitenant/live/cluster-autoscaler';
import { bestFitPlace } from '../multitenant/live/kube-placement';
import { clusterLending } from '../multitenant/live/lending';
import { kubePlacementGate } from '../../gateway/providers/kubernetes/start';

/** The node's devices as the autoscaler sees them: one per core on a machine without a GPU. */
export function localDevices(): string[] {
  return cpus().map((_, i) => `cpu${i}`);
}

/** The cores a fixed cluster of `auto` capacity has: this node's (the local provider); Kubernetes must be given a number. */
export function clusterCores(cfg: Config): number | undefined {
  const c = cfg.autoscaler.cluster?.capacity;
  if (c === undefined || typeof c === 'number') return c;
  if (cfg.provider !== 'local') throw new Error('config: MLFAAS_CLUSTER_CAPACITY=auto is this node\'s cores: on Kubernetes give the cores as a number');
  return cpus().length;
}

/** The autoscaler's policy in words for the start-up log: the per-function policy, or the fixed-cluster controller and its cores. */
export function autoscalerPolicyName(cfg: Config): string {
  const c = cfg.autoscaler.cluster;
  return c ? `fixed cluster of ${c.capacity} cores, controller ${c.controller}${clusterLending(c.controller, c.lending) ? ', lending idle CPU' : ''}`
    : `policy ${cfg.autoscaler.policy}`;
}

/**
 * Starts the live inference autoscaler (leader-elected in Redis unless `leader` is given): the
 * configured per-function policy, or with `MLFAAS_CLUSTER_CAPACITY` the fixed-cluster controller
 * over every inference function (autoscaler/multitenant/live/).
 */
export async function startAutoscaler(cfg: Config, redis: Redis, provider: FunctionProvider, leader?: LeaderLease,
  clock: Clock = systemClock): Promise<LiveAutoscaler | ClusterAutoscaler> {
  const capacity = clusterCores(cfg);
  if (capacity !== undefined) {
    const intervalMs = cfg.autoscaler.intervalMs;
    const controller = createClusterController(cfg.autoscaler.cluster!.controller, { tickS: intervalMs / 1000, capacity });
    // on Kubernetes the placement chooses each new pod's node and GPU (the pods wait behind its scheduling gate)
    const gate = cfg.provider === 'kubernetes' ? kubePlacementGate(cfg, bestFitPlace) : undefined;
    const beforeTick = gate && (async () => (await gate.round()).map((r) => `placement: ${r.pod} ${r.node ? `→ ${r.node}` : 'waits'}: ${r.why}`));
    const lending = clusterLending(cfg.autoscaler.cluster!.controller, cfg.autoscaler.cluster!.lending);
    const c = new ClusterAutoscaler(redis, provider, controller, { leader, capacity, intervalMs, defaultSloMs: cfg.autoscaler.defaultSloMs, beforeTick,
      lending }, clock);
    await c.start();
    return c;
  }
  const a = new LiveAutoscaler(redis, provider, {
    leader,
    policy: cfg.autoscaler.policy,
    params: cfg.autoscaler.params,
    intervalMs: cfg.autoscaler.intervalMs,
    defaultSloMs: cfg.autoscaler.defaultSloMs,
    devices: localDevices(),
    sloGuardS: cfg.autoscaler.sloGuardS,
    sloGuardHoldS: cfg.autoscaler.sloGuardHoldS,
  }, clock);
  await a.start();
  return a;
}

/**
 * Starts the training round loop with the configured policy (leader-elected in Redis). Locally it
 * belongs in the process that runs this node's agent: the jobs' processes are children of the
 * loop, started from the node's image store in the agent's sandbox. On Kubernetes it runs in the
 * autoscaler process, and the jobs are pods on the training nodes (`capacity`).
 */
export async function startTrainingLoop(cfg: Config, redis: Redis, book: JobBook, launcher: JobLauncher, noun: SlotNoun, capacity?: TrainingCapacity,
  beforeRound?: () => Promise<void>, clock: Clock = systemClock): Promise<TrainingLoop> {
  const loop = new TrainingLoop(redis, book, launcher, {
    capacity,
    beforeRound,
    policy: cfg.training.policy,
    slotSeconds: cfg.training.slotSeconds,
    slots: cfg.training.slots,
    lockMs: cfg.training.lockMs,
    noun,
  }, clock);
  await loop.start();
  return loop;
}
