/**
 * Keeps one child process running: when it dies a new one is started through the factory after a
 * back-off (which starts over after a stable run), each death, failed start and restart is logged,
 * restarts are counted, and a hook runs after each restart. `stop()` stops the child and starts no
 * other. What a death means and what must follow a restart belong to the caller
 * (`RedisSupervisor`, `TokendSupervisor`).
 */

/** How a child exited. */
export interface ChildExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** A running child, as the supervisor sees it. */
export interface SupervisedChild {
  pid: number;
  /** Resolves when the process exits, for whatever reason. */
  exited: Promise<ChildExit>;
  /** Stops it; resolves when it has exited. */
  stop(): Promise<void>;
}

export interface SupervisorOptions<P extends SupervisedChild> {
  /** Starts a child; resolves once it serves, rejects if it does not come up. */
  start(): Promise<P>;
  /** Delay before the n-th consecutive restart (0-based; the last one repeats), ms. */
  backoffMs: readonly number[];
  /** A child that ran this long before dying starts the back-off over, ms. */
  stableRunMs: number;
  /** One line to the platform log. */
  log(line: string): void;
  /** A child died that was not stopped (a restart follows in `delayMs`): the line to log. */
  died(p: P, exit: ChildExit, delayMs: number): string;
  /** Starting a replacement failed (tried again in `delayMs`): the line to log. */
  startFailed(e: Error, delayMs: number): string;
  /** A replacement runs, the `restarts`-th so far: the line to log. */
  restarted(p: P, restarts: number): string;
  /** Called after each restart, once its line is logged. */
  afterRestart?(p: P): void;
}

/** `backoffMs[consecutive]`, the last entry for every restart past the table (pure). */
export function backoffDelayMs(backoffMs: readonly number[], consecutive: number): number {
  return backoffMs[Math.min(Math.max(consecutive, 0), backoffMs.length - 1)];
}

/** `SIGKILL`, or `status 1`: how a child exited, for a log line. */
export function exitText({ code, signal }: ChildExit): string {
  return signal ?? `status ${code}`;
}

export class Supervisor<P extends SupervisedChild> {
  private stopping = false;
  private consecutive = 0;
  private startedAt = Date.now();
  private timer?: NodeJS.Timeout;
  private restarting?: Promise<void>;
  private restartCount = 0;

  private constructor(
    private readonly o: SupervisorOptions<P>,
    private child: P,
  ) {
    this.watch(child);
  }

  /** Starts the first child (throws if that fails) and supervises it until `stop()`. */
  static async start<P extends SupervisedChild>(o: SupervisorOptions<P>): Promise<Supervisor<P>> {
    return new Supervisor(o, await o.start());
  }

  /** The child running now (or the last one, while a restart is pending). */
  get current(): P {
    return this.child;
  }

  /** Restarts so far. */
  get restarts(): number {
    return this.restartCount;
  }

  private watch(p: P): void {
    void p.exited.then((exit) => {
      if (this.stopping || this.child !== p) return;
      if (Date.now() - this.startedAt >= this.o.stableRunMs) this.consecutive = 0;
      const delay = backoffDelayMs(this.o.backoffMs, this.consecutive);
      this.o.log(this.o.died(p, exit, delay));
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
    let p: P;
    try {
      p = await this.o.start();
    } catch (e) {
      const delay = backoffDelayMs(this.o.backoffMs, this.consecutive);
      this.o.log(this.o.startFailed(e as Error, delay));
      this.schedule(delay);
      return;
    }
    if (this.stopping) {
      await p.stop();
      return;
    }
    this.child = p;
    this.startedAt = Date.now();
    this.restartCount++;
    this.o.log(this.o.restarted(p, this.restartCount));
    this.watch(p);
    this.o.afterRestart?.(p);
  }

  /** Stops supervising (no restart starts after this) and stops the child. */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.timer) clearTimeout(this.timer);
    await this.restarting?.catch(() => undefined);
    await this.child.stop();
  }
}
