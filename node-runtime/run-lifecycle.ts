import type { RunnerEnd, WorkerPlace } from '../gateway/ports/training-jobs';
import { samePlace } from '../gateway/jobs/training-capacity';

/**
 * A training run's allocations and end, whatever runs it (a local process: `JobRunner`; a pod:
 * `KubeJob`). A change of worker count stops the running allocation (SIGTERM: the harness
 * checkpoints) and starts the next, one change at a time. The run ends once: by completion or
 * failure (`end`), a cancel, or a shutdown's suspend, both of which stop it first, checkpoint kept.
 */
export abstract class RunLifecycle {
  workers = 0;
  /** Where the running allocation is (undefined on one node). */
  place?: WorkerPlace;
  readonly ended: Promise<RunnerEnd>;
  private resolveEnd!: (e: RunnerEnd) => void;
  protected finished?: RunnerEnd;
  private chain: Promise<void> = Promise.resolve();

  constructor(private readonly report: (text: string) => void) {
    this.ended = new Promise((r) => (this.resolveEnd = r));
  }

  /** Stops whatever runs now and waits until it is gone. */
  protected abstract stopRun(): Promise<void>;

  /** Starts an allocation of `n` workers at `place` (from the checkpoint, if there is one). */
  protected abstract startRun(n: number, place?: WorkerPlace): Promise<void> | void;

  /** Serialised: the next change waits for the previous stop/start. */
  setWorkers(n: number, place?: WorkerPlace): Promise<void> {
    this.chain = this.chain.then(() => this.apply(n, place)).catch((e) => this.report(`runner: ${(e as Error).message}`));
    return this.chain;
  }

  private async apply(n: number, place?: WorkerPlace): Promise<void> {
    if (this.finished || (n === this.workers && samePlace(place, this.place))) return;
    await this.stopRun();
    this.workers = n;
    this.place = n > 0 ? place : undefined;
    if (n > 0) await this.startRun(n, place);
  }

  private failures = 0;

  /**
   * The running allocation ended by itself: the run completed, or it failed and restarts from
   * its checkpoint at the same count and place after a back-off (given up after 3 failures).
   */
  protected allocationEnded(completed: boolean, what: string): void {
    if (completed) return this.end('completed');
    this.failures++;
    this.report(`${what}${this.failures < 3 ? '; restarting from the checkpoint' : '; giving up'}`);
    if (this.failures >= 3) return this.end('failed');
    const [w, at] = [this.workers, this.place];
    this.workers = 0;
    setTimeout(() => void this.setWorkers(w, at), 1000 * this.failures).unref();
  }

  protected end(e: RunnerEnd): void {
    if (this.finished) return;
    this.finished = e;
    this.resolveEnd(e);
  }

  /** Stops the run (checkpoint kept); it ends as `cancelled`. */
  async cancel(): Promise<void> {
    this.end('cancelled');
    await this.stopRun();
  }

  /** Stops the run for a platform shutdown (checkpoint kept; the job resumes on restart); it ends as `suspended`. */
  async suspend(): Promise<void> {
    const first = !this.finished;
    this.finished = this.finished ?? 'suspended';
    await this.stopRun();
    if (first) this.resolveEnd('suspended');
  }
}
