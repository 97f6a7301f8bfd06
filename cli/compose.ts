/**
 * The composition root: the one place that wires the autoscaler's implementations into the
 * gateway's ports (`gateway/ports/`). The gateway, its stores and providers never import the
 * autoscaler; the autoscaler is their client (as in OpenFaaS), started beside them by `up.ts` and
 * `main.ts`.
 */
import type { Config } from '../gateway/config';
import { type Gateway, type GatewayOptions, startGateway } from '../gateway/server';
import { startTrainingLoop } from '../autoscaler/live/start';
import { rappProfiler } from '../autoscaler/rapp/rapp-profiler';
import { trainingScheduler } from '../autoscaler/training/scheduler';
import { type Clock, systemClock } from '../gateway/ports/clock';

/** The ports a gateway process needs, implemented by the autoscaler side; `clock` is the one the jobs API and the round loop share. */
export function gatewayPorts(cfg: Config, clock: Clock = systemClock): Omit<GatewayOptions, 'embeddedRedis'> {
  return {
    clock,
    scheduler: trainingScheduler,
    // locally the round loop runs in the process of the node's agent: the jobs are its children
    trainingLoop: (p) => startTrainingLoop(cfg, p.redis, p.book, p.launcher, p.noun, undefined, undefined, clock),
    profiler: rappProfiler,
  };
}

/** A gateway (with its agent and training loop where configured), its ports wired. */
export function startPlatformGateway(cfg: Config, redisTarget: string, opts: Pick<GatewayOptions, 'embeddedRedis'> = {}): Promise<Gateway> {
  return startGateway(cfg, redisTarget, { ...opts, ...gatewayPorts(cfg) });
}
