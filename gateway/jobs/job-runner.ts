import { ChildProcess } from 'node:child_process';
import type { JobProcess, RunnerEnd, RunnerHooks } from '../../autoscaler/live/training-jobs';
import { JobProgress, JobRecord } from './job-record';
import { exited, HarnessLine, HarnessSandbox, spawnHarness } from './harness';

/**
 * Runs one job's training process at the scheduler's worker count. A change of count (or 0 to
 * wait) is SIGTERM → the harness checkpoints and exits → restart with the new `WORKERS`, which
 * resumes from the checkpoint with the local batch rescaled.
 */
export class JobRunner implements JobProcess {
  workers = 0;
  private child?: ChildProcess;
  private finished?: RunnerEnd;
  private resolveEnd!: (e: RunnerEnd) => void;
  readonly ended: Promise<RunnerEnd>;
  private chain: Promise<void> = Promise.resolve();
  private failures = 0;

  constructor(
    private readonly rec: JobRecord,
    private readonly dir: string,
    private readonly hooks: RunnerHooks,
    /** Added to the harness's environment (the resolved `DATASET` path). */
    private readonly extraEnv: Record<string, string> = {},
    /** Confinement of the training processes (own uid, mount namespace, cgroup); absent = none. */
    private readonly sandbox?: Omit<HarnessSandbox, 'id'>,
  ) {
    this.ended = new Promise((r) => (this.resolveEnd = r));
  }

  /** Serialised: the next change waits for the previous stop/start. */
  setWorkers(n: number): Promise<void> {
    this.chain = this.chain.then(() => this.apply(n)).catch((e) => this.hooks.log(`runner: ${(e as Error).message}`));
    return this.chain;
  }

  private async apply(n: number): Promise<void> {
    if (this.finished || n === this.workers) return;
    await this.stopProcess();
    this.workers = n;
    if (n > 0) this.start(n);
  }

  private start(n: number): void {
    const r = this.rec;
    const env: Record<string, string> = {
      ...this.extraEnv,
      EPOCHS: String(r.epochs),
      BATCH_SIZE: String(Math.max(r.batchSize, n)),
      LEARNING_RATE: String(r.learningRate),
      CHECKPOINT_DIR: r.checkpointDir,
      WORKERS: String(n),
      MODEL: r.model,
      JOB_ID: r.id,
    };
    let done = false;
    const child = spawnHarness(
      this.dir,
      env,
      (l: HarnessLine) => {
        if (l.type === 'progress') this.hooks.progress(toProgress(l));
        if (l.type === 'done') done = true;
      },
      (t) => this.hooks.log(t),
      this.sandbox && { ...this.sandbox, id: `train-${r.id.slice(0, 8)}-${n}` },
    );
    this.child = child;
    void exited(child).then((code) => {
      if (this.child !== child) return; // stopped on purpose for a new allocation
      this.child = undefined;
      if (done && code === 0) return this.end('completed');
      this.failures++;
      this.hooks.log(`training process exited ${code}${this.failures < 3 ? '; restarting from the checkpoint' : '; giving up'}`);
      if (this.failures >= 3) return this.end('failed');
      const w = this.workers;
      this.workers = 0;
      setTimeout(() => void this.setWorkers(w), 1000 * this.failures);
    });
  }

  private async stopProcess(): Promise<void> {
    const c = this.child;
    if (!c) return;
    this.child = undefined;
    c.kill('SIGTERM'); // the harness checkpoints and exits 0 within its grace period
    const t = setTimeout(() => c.kill('SIGKILL'), 15_000);
    await exited(c);
    clearTimeout(t);
  }

  private end(e: RunnerEnd): void {
    if (this.finished) return;
    this.finished = e;
    this.resolveEnd(e);
  }

  /** Stops the process (checkpoint kept) and ends the run as cancelled. */
  async cancel(): Promise<void> {
    this.end('cancelled');
    await this.stopProcess();
  }

  /** Stops the process for a platform shutdown (checkpoint kept; the job resumes on restart); the run ends as `suspended`. */
  async suspend(): Promise<void> {
    const first = !this.finished;
    this.finished = this.finished ?? 'suspended';
    await this.stopProcess();
    if (first) this.resolveEnd('suspended');
  }
}

function toProgress(l: HarnessLine): JobProgress {
  const n = (k: string) => (typeof l[k] === 'number' ? (l[k] as number) : undefined);
  return {
    epoch: n('epoch') ?? 0,
    epochs: n('epochs') ?? 0,
    step: n('step') ?? 0,
    samples: n('samples') ?? 0,
    loss: n('loss'),
    accuracy: n('accuracy'),
    examplesPerSec: n('examplesPerSec'),
    gradNoiseScale: (l.gradNoiseScale as number | null | undefined) ?? null,
    statEfficiency: (l.statEfficiency as number | null | undefined) ?? null,
  };
}
