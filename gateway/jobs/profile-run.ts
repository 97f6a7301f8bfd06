import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ProfileSample } from '../../autoscaler/training/profile';
import { exited, HarnessLine, spawnHarness } from './harness';

export interface ModelProfile {
  samples: ProfileSample[];
  trainExamples: number;
}

/**
 * The first job of a model runs a short profile: one epoch at 1 and at 2 workers (no checkpoint
 * kept, no noise-scale pass), measuring iterations/s at the job's batch size. Bounded by
 * `timeoutMs` per run.
 */
export async function profileModel(dir: string, env: Record<string, string>, batchSize: number, timeoutMs = 60_000): Promise<ModelProfile> {
  const samples: ProfileSample[] = [];
  let trainExamples = 0;
  for (const gpus of [1, 2] as const) {
    const ckpt = mkdtempSync(join(tmpdir(), 'mlfaas-profile-'));
    let eps = 0;
    const child = spawnHarness(
      dir,
      { ...env, EPOCHS: '1', WORKERS: String(gpus), BATCH_SIZE: String(batchSize), CHECKPOINT_DIR: ckpt, GNS_MAX_BATCHES: '0', CHECKPOINT_EVERY: '1000' },
      (l: HarnessLine) => {
        if (l.type === 'start') trainExamples = Number(l.trainExamples) || trainExamples;
        if (l.type === 'progress') eps = Number(l.examplesPerSec) || 0;
      },
      () => undefined,
    );
    const t = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    const code = await exited(child);
    clearTimeout(t);
    rmSync(ckpt, { recursive: true, force: true });
    if (code !== 0 || !(eps > 0)) throw new Error(`profile run at ${gpus} worker(s) failed (exit ${code})`);
    samples.push({ gpus, iterPerSec: eps / batchSize });
  }
  return { samples, trainExamples };
}
