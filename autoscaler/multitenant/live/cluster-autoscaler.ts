import type Redis from 'ioredis';
import { Lease } from '../../../gateway/lib/lease';
import { type Clock, systemClock } from '../../../gateway/ports/clock';
import type { FunctionProvider } from '../../../gateway/providers/function-provider';
import type { LeaderLease } from '../../../gateway/providers/kubernetes/kube-lease';
import type { ClusterController } from '../types';
import { ClusterRunner, ClusterRunnerOptions, ClusterTickReport } from './runner';
import { gridClusterController } from './grid';
import { mlfaasClusterController } from '../mlfaas';

/** The same lock as the per-function live autoscaler's: one autoscaler of either kind leads. */
const LOCK = 'mlfaas:autoscaler-lock';

/**
 * Fixed-cluster controllers the live platform can run (`MLFAAS_CLUSTER_CONTROLLER`): `mlfaas`
 * (engineer F's, autoscaler/multitenant/mlfaas/) and `grid` (grid.ts, the utility optimum on a
 * 0.1-core grid at the rates seen now).
 */
export const CLUSTER_CONTROLLERS: Record<string, (o: { tickS: number; capacity: number }) => ClusterController> = {
  mlfaas: (o) => mlfaasClusterController(o),
  grid: (o) => gridClusterController({ tickS: o.tickS }),
};

export const DEFAULT_CLUSTER_CONTROLLER = 'grid';

export function createClusterController(name: string, o: { tickS: number; capacity: number }): ClusterController {
  const make = CLUSTER_CONTROLLERS[name];
  if (!make) throw new Error(`unknown fixed-cluster controller "${name}" (known: ${Object.keys(CLUSTER_CONTROLLERS).join(', ')})`);
  return make(o);
}

export interface ClusterAutoscalerOptions extends ClusterRunnerOptions {
  leader?: LeaderLease;
  leaseMs?: number;
  /** Called after every tick (logs, tests). */
  onTick?: (r: ClusterTickReport, now: number) => void;
  /** Run by the leader before each tick (on Kubernetes: a round of the placement gate); its lines join the history. */
  beforeTick?: () => Promise<string[]>;
}

/**
 * The live autoscaler in fixed-cluster mode (`MLFAAS_CLUSTER_CAPACITY`): one leader at a time (the
 * per-function autoscaler's lease), a tick every interval, each one the runner's round over every
 * inference function (runner.ts). It replaces the per-function autoscaler: both would size the
 * same replicas.
 */
export class ClusterAutoscaler {
  readonly runner: ClusterRunner;
  /** One line per recent tick, oldest first (the last 300): what the controller saw and did. */
  readonly history: string[] = [];
  private readonly lease: LeaderLease;
  private timer?: NodeJS.Timeout;
  private running = false;

  constructor(redis: Redis, provider: FunctionProvider, controller: ClusterController, private readonly opts: ClusterAutoscalerOptions,
    private readonly clock: Clock = systemClock) {
    this.runner = new ClusterRunner(redis, provider, controller, opts);
    this.lease = opts.leader ?? new Lease(redis, LOCK, opts.leaseMs ?? 5000, async () => undefined, async () => undefined);
  }

  async start(): Promise<void> {
    await this.lease.start();
    this.timer = setInterval(() => {
      if (!this.lease.isHeld || this.running) return;
      this.running = true;
      const now = this.clock.now();
      void (this.opts.beforeTick?.() ?? Promise.resolve([]))
        .catch((e: Error) => [`before the tick: ${e.message}`])
        .then((lines) => this.history.push(...lines.map((l) => `${new Date(now).toISOString().slice(11, 23)} ${l}`)))
        .then(() => this.runner.tick(now))
        .then((r) => {
          this.history.push(`${summarise(r, now)} (${this.clock.now() - now} ms)`);
          if (this.history.length > 300) this.history.shift();
          this.opts.onTick?.(r, now);
        })
        .catch((e: Error) => this.history.push(`${new Date(now).toISOString().slice(11, 23)} tick failed: ${e.message}`))
        .finally(() => (this.running = false));
    }, this.opts.intervalMs);
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.lease.close();
  }
}

/** A tick in one line: each job's offered rate, cores and accept rate, then the decision or the runner's notes. */
export function summarise(r: ClusterTickReport, now: number): string {
  const jobs = r.view.jobs.map((j) => {
    const t = r.applied[j.name];
    const alloc = t ? `${t.replicas}×${t.quota}${t.acceptRate < 1 ? ` a=${t.acceptRate}` : ''}` : '?';
    return `${j.name.split('.')[0]} ${(j.arrivalRps ?? 0).toFixed(1)}/s ${alloc}`;
  });
  const what = r.decision ? r.decision.reason : 'hold';
  return `${new Date(now).toISOString().slice(11, 23)} ${jobs.join(', ')} | ${what}${r.notes.length ? ` | ${r.notes.join('; ')}` : ''}` +
    `${r.errors.length ? ` | errors: ${r.errors.join('; ')}` : ''}`;
}
