import { ChildProcess } from 'node:child_process';
import type { JobProcess, RunnerHooks } from '../gateway/ports/training-jobs';
import { JobProgress, JobRecord } from '../gateway/jobs/job-record';
import { exited, HarnessLine, HarnessSandbox, spawnHarness } from './harness';
import { RunLifecycle } from './run-lifecycle';

/**
 * Runs one job's training process at the scheduler's worker count. A change of count (or 0 to
 * wait) is SIGTERM → the harness checkpoints and exits → restart with the new `WORKERS`, which
 * resumes from the checkpoint with the local batch rescaled.
 */
export class JobRunner extends RunLifecycle implements JobProcess {
  private child?: ChildProcess;

  constructor(
    private readonly rec: JobRecord,
    private readonly dir: string,
    private readonly hooks: RunnerHooks,
    /** Added to the harness's environment (the resolved `DATASET` path). */
    private readonly extraEnv: Record<string, string> = {},
    /** Confinement of the training processes (own uid, mount namespace, cgroup); absent = none. */
    private readonly sandbox?: Omit<HarnessSandbox, 'id'>,
  ) {
    super((t) => hooks.log(t));
  }

  protected startRun(n: number): void {
    const r = this.rec;
    const env = { ...this.extraEnv, ...jobEnv(r, n, r.checkpointDir) };
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
      this.allocationEnded(done && code === 0, `training process exited ${code}`);
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

  protected stopRun(): Promise<void> {
    return this.stopProcess();
  }
}

/** The harness's environment for an allocation of `workers` to a job (its hyper-parameters, its checkpoint folder). */
export function jobEnv(rec: JobRecord, workers: number, checkpointDir: string): Record<string, string> {
  return {
    EPOCHS: String(rec.epochs),
    BATCH_SIZE: String(Math.max(rec.batchSize, workers)),
    LEARNING_RATE: String(rec.learningRate),
    CHECKPOINT_DIR: checkpointDir,
    WORKERS: String(workers),
    MODEL: rec.model,
    JOB_ID: rec.id,
  };
}

/** A harness `progress` line as the job's progress record. */
export function toProgress(l: HarnessLine): JobProgress {
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
