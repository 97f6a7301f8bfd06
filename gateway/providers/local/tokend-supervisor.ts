/**
 * Keeps the node's tokend running: when it dies it is started again (same sockets) after a
 * backoff, each death and restart is logged, counted, and the current quotas are pushed again
 * (a new tokend knows no rules; without them every replica would run unmetered).
 */
import { startTokend, StartTokendOptions, TokendProcess } from './tokend-process';

/** Delay before the n-th consecutive restart (0-based), ms. */
export const TOKEND_BACKOFF_MS = [100, 500, 1000, 2000, 5000, 10_000];
/** A tokend that ran this long before dying starts the backoff over, ms. */
export const STABLE_RUN_MS = 30_000;

/** Backoff for the `consecutive`-th restart in a row (pure). */
export function restartDelayMs(consecutive: number): number {
  return TOKEND_BACKOFF_MS[Math.min(Math.max(consecutive, 0), TOKEND_BACKOFF_MS.length - 1)];
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
  private current: TokendProcess;
  private stopping = false;
  private consecutive = 0;
  private startedAt = Date.now();
  private timer?: NodeJS.Timeout;
  private restarting?: Promise<void>;
  /** Restarts so far. */
  restarts = 0;

  private constructor(
    first: TokendProcess,
    private readonly opts: StartTokendOptions,
    private readonly hooks: SupervisorHooks,
  ) {
    this.current = first;
    this.watch(first);
  }

  /** Starts tokend (throws if the first start fails) and supervises it until `stop()`. */
  static async start(opts: StartTokendOptions, hooks: SupervisorHooks): Promise<TokendSupervisor> {
    return new TokendSupervisor(await startTokend(opts), opts, hooks);
  }

  get socketPath(): string {
    return this.current.socketPath;
  }

  get controlPath(): string {
    return this.current.controlPath;
  }

  /** The pid of the tokend running now. */
  get pid(): number {
    return this.current.pid;
  }

  private watch(p: TokendProcess): void {
    void p.exited.then(({ code, signal }) => {
      if (this.stopping || this.current !== p) return;
      if (Date.now() - this.startedAt >= STABLE_RUN_MS) this.consecutive = 0;
      const delay = restartDelayMs(this.consecutive);
      this.hooks.log(`tokend (pid ${p.pid}) died (${signal ?? `status ${code}`}); quotas are not enforced until it is back; restarting in ${delay} ms`);
      this.schedule(delay);
    });
  }

  private schedule(delay: number): void {
    this.consecutive++;
    this.timer = setTimeout(() => {
      this.restarting = this.restart().finally(() => (this.restarting = undefined));
    }, delay);
  }

  private async restart(): Promise<void> {
    if (this.stopping) return;
    let p: TokendProcess;
    try {
      p = await startTokend(this.opts);
    } catch (e) {
      const delay = restartDelayMs(this.consecutive);
      this.hooks.log(`tokend restart failed: ${(e as Error).message}; retrying in ${delay} ms`);
      this.schedule(delay);
      return;
    }
    if (this.stopping) {
      await p.stop();
      return;
    }
    this.current = p;
    this.startedAt = Date.now();
    this.restarts++;
    this.hooks.restarted?.();
    this.hooks.log(`tokend restarted (pid ${p.pid}, restart ${this.restarts}); re-applying replica quotas`);
    this.watch(p);
    void this.hooks.onRestart?.().catch((e: Error) => this.hooks.log(`tokend: re-applying quotas failed: ${e.message}`));
  }

  /** Stops supervising and stops tokend (SIGTERM, SIGKILL after 2 s). */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.timer) clearTimeout(this.timer);
    await this.restarting?.catch(() => undefined);
    await this.current.stop();
  }
}
