import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import type { ProfileSample } from '../ports/training-scheduler';
import { ErrorCode, PlatformError } from '../errors';
import { exited, HarnessLine, HarnessSandbox, spawnHarness } from '../../node-runtime/harness';

export interface ModelProfile {
  /** Iterations/s at 1 and 2 workers, from the wall time of a whole epoch as a job runs it. */
  samples: ProfileSample[];
  trainExamples: number;
  /** s from spawning the process to its first iteration (process start, data load, worker threads); the larger of the two runs. */
  launchSeconds: number;
  /** s from the last epoch's report to the process's exit (final checkpoint, evaluation); the larger of the two runs. */
  exitSeconds: number;
}

/** Epochs a profile run trains: the first pays warm-up, the second is the one measured. */
export const PROFILE_EPOCHS = 2;

/** A harness run as profiling sees it: its exit code once every line was delivered, and a kill. */
export interface HarnessHandle {
  exited: Promise<number | null>;
  kill(): void;
}

/**
 * Starts one profile run of the harness with `env` (its own scratch checkpoint folder is the
 * starter's business): a local process (`localHarness`) or a pod (Kubernetes).
 */
export type HarnessStarter = (env: Record<string, string>, onLine: (l: HarnessLine) => void, onText: (t: string) => void) => HarnessHandle;

/** Profile runs as local processes of an image directory, each with a scratch checkpoint folder. */
export function localHarness(dir: string, sandbox?: Omit<HarnessSandbox, 'id'>): HarnessStarter {
  return (env, onLine, onText) => {
    const ckpt = mkdtempSync(join(tmpdir(), 'mlfaas-profile-'));
    const child = spawnHarness(dir, { ...env, CHECKPOINT_DIR: ckpt }, onLine, onText, sandbox && { ...sandbox, id: `profile-${basename(ckpt)}` });
    const done = exited(child);
    void done.then(() => rmSync(ckpt, { recursive: true, force: true }));
    return { exited: done, kill: () => child.kill('SIGKILL') };
  };
}

/**
 * The first job of a model runs a short profile: two epochs at 1 and at 2 workers with the job's
 * own settings (checkpoint every epoch, noise-scale pass), timed from outside. The second epoch's
 * wall time (report to report: training, evaluation, noise pass, checkpoint) gives the
 * iterations/s a job will really see; spawn to first report minus one epoch gives the launch
 * cost, last report to exit the exit cost. Bounded by `timeoutMs` per run. A run that fails is a
 * 400: the job as submitted cannot run (the harness's own message says why).
 */
export async function profileModel(start: HarnessStarter, env: Record<string, string>, batchSize: number, timeoutMs = 60_000): Promise<ModelProfile> {
  const samples: ProfileSample[] = [];
  let trainExamples = 0;
  let launchSeconds = 0;
  let exitSeconds = 0;
  for (const gpus of [1, 2] as const) {
    const reports: Array<{ at: number; step: number }> = [];
    const text: string[] = [];
    const t0 = performance.now();
    const run = start(
      { ...env, EPOCHS: String(PROFILE_EPOCHS), WORKERS: String(gpus), BATCH_SIZE: String(Math.max(batchSize, gpus)) },
      (l: HarnessLine) => {
        if (l.type === 'start') trainExamples = Number(l.trainExamples) || trainExamples;
        if (l.type === 'progress') reports.push({ at: performance.now(), step: Number(l.step) || 0 });
      },
      (t) => text.push(t) > 20 && text.shift(),
    );
    const t = setTimeout(() => run.kill(), timeoutMs);
    const code = await run.exited;
    const tExit = performance.now();
    clearTimeout(t);
    const [a, b] = reports;
    if (code !== 0 || !b || !(b.step > a.step) || !(b.at > a.at)) {
      const fatal = text.find((l) => l.includes('fatal:')) ?? text.filter((l) => /Error/.test(l)).pop() ?? text.pop() ?? '';
      const msg = fatal.replace(/^\[ml-training\]\s*(fatal:\s*)?/, '').slice(0, 300);
      const field = /\bMODEL\b|createModel/.test(msg) ? 'model' : /DATASET|dataset|ENOENT/.test(msg) ? 'dataset' : 'function';
      throw new PlatformError(ErrorCode.Validation,
        `the training function cannot run this job: its profile run at ${gpus} worker(s) exited ${code}${msg ? `: ${msg}` : ''}`, field);
    }
    const epochS = (b.at - a.at) / 1000;
    samples.push({ gpus, iterPerSec: (b.step - a.step) / epochS });
    launchSeconds = Math.max(launchSeconds, (a.at - t0) / 1000 - epochS);
    exitSeconds = Math.max(exitSeconds, (tExit - b.at) / 1000);
  }
  return { samples, trainExamples, launchSeconds, exitSeconds };
}
