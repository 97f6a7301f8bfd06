// The types of a started gateway (gateway/server.ts's startGateway): what it returns and the options
// the composition root (cli/compose.ts) passes it. server.ts re-exports both.
import type Redis from 'ioredis';
import type { AsyncInvocations } from './async/async-invocations';
import type { Config } from './config';
import type { EmbeddedRedis } from './lib/redis-server';
import type { LocalAgent } from './providers/local/agent';
import type { TokendSupervisor } from '../node-runtime/tokend-supervisor';
import type { FunctionProvider } from './providers/function-provider';
import type { JobService } from './jobs/job-service';
import type { FunctionRouter } from './proxy/router';
import type { CapabilityProfiler } from './ports/capability-profiler';
import type { RunningTrainingLoop, TrainingLoopStarter } from './ports/training-jobs';
import type { TrainingScheduler } from './ports/training-scheduler';
import type { Clock } from './ports/clock';

/** A running gateway (with its local provider, and the agent when enabled). */
export interface Gateway {
  url: string;
  port: number;
  cfg: Config;
  redis: Redis;
  provider: FunctionProvider;
  agent?: LocalAgent;
  /** The supervised tokend, when this gateway runs the agent and tokend is built. */
  tokend?: TokendSupervisor;
  router: FunctionRouter;
  asyncInvocations: AsyncInvocations;
  /** The training jobs API (admission, cancel, the job store). */
  training: JobService;
  /** The training round loop, when this gateway runs the agent (the jobs' processes are its children). */
  trainingLoop?: RunningTrainingLoop;
  /** Lines for the start-up log: auth (a generated password, once), isolation. */
  notices: string[];
  close(): Promise<void>;
}

export interface GatewayOptions {
  /** The supervised embedded Redis behind `redisTarget`, when this process runs it: its restarts are counted. */
  embeddedRedis?: EmbeddedRedis;
  /** The training scheduler the jobs API admits with (a port; the composition root `cli/compose.ts` injects it). */
  scheduler: TrainingScheduler;
  /** Starts the training round loop where this gateway runs the local agent (absent: no loop here). */
  trainingLoop?: TrainingLoopStarter;
  /** The deploy-time capability profile the agent runs (RaPP's, a port; absent: no profiling). */
  profiler?: CapabilityProfiler;
  /** The platform's clock (ms) the jobs API and service read (absent: the system clock); the composition root passes the loops' own. */
  clock?: Clock;
}
