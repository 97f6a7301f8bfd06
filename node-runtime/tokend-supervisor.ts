/**
 * Keeps the node's tokend running: when it dies it is started again (same sockets) after a
 * backoff, each death and restart is logged, counted, and the current quotas are pushed again
 * (a new tokend knows no rules; without them every replica would run unmetered). The loop itself
 * is `Supervisor` (lib/supervisor.ts).
 */
import { backoffDelayMs, exitText, Supervisor } from '../gateway/lib/supervisor';
import { startTokend, StartTokendOptions, TokendProcess } from './tokend-process';

/** Delay before the n-th consecutive restart (0-based), ms. */
export const TOKEND_BACKOFF_MS = [100, 500, 1000, 2000, 5000, 10_000];
/** A tokend that ran this long before dying starts the backoff over, ms. */
export const STABLE_RUN_MS = 30_000;

/** Backoff for the `consecutive`-th restart in a row (pure). */
export function restartDelayMs(consecutive: number): number {
  return backoffDelayMs(TOKEND_BACKOFF_MS, consecutive);
}

export interface SupervisorHooks {
  /** One line to the platform log (stderr of `mlfaas up`). */
  log(line: string): void;
  /** Called after every restart: re-push the replicas' quotas. Errors are logged. */
  onRestart?(): Promise<void>;
  /** Counts restarts (`mlfaas_component_restarts_total{component="tokend"}`). */
  restarted?(): void;
}

export class TokendSupervisor {
  private constructor(private readonly loop: Supervisor<TokendProcess>) {}

  /** Starts tokend (throws if the first start fails) and supervises it until `stop()`. */
  static async start(opts: StartTokendOptions, hooks: SupervisorHooks): Promise<TokendSupervisor> {
    const loop = await Supervisor.start<TokendProcess>({
      start: () => startTokend(opts),
      backoffMs: TOKEND_BACKOFF_MS,
      stableRunMs: STABLE_RUN_MS,
      log: (line) => hooks.log(line),
      died: (p, exit, delay) => `tokend (pid ${p.pid}) died (${exitText(exit)}); quotas are not enforced until it is back; restarting in ${delay} ms`,
      startFailed: (e, delay) => `tokend restart failed: ${e.message}; retrying in ${delay} ms`,
      restarted: (p, n) => `tokend restarted (pid ${p.pid}, restart ${n}); re-applying replica quotas`,
      afterRestart: () => {
        hooks.restarted?.();
        void hooks.onRestart?.().catch((e: Error) => hooks.log(`tokend: re-applying quotas failed: ${e.message}`));
      },
    });
    return new TokendSupervisor(loop);
  }

  get socketPath(): string {
    return this.loop.current.socketPath;
  }

  get controlPath(): string {
    return this.loop.current.controlPath;
  }

  /** The pid of the tokend running now. */
  get pid(): number {
    return this.loop.current.pid;
  }

  /** Restarts so far. */
  get restarts(): number {
    return this.loop.restarts;
  }

  /** Stops supervising and stops tokend (SIGTERM, SIGKILL after 2 s). */
  stop(): Promise<void> {
    return this.loop.stop();
  }
}
