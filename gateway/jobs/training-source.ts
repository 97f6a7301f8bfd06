import type Redis from 'ioredis';
import { ErrorCode, functionNotFound, PlatformError } from '../errors';
import type { FunctionProvider, FunctionStatus } from '../providers/function-provider';
import type { JobLauncher } from '../ports/training-jobs';
import type { JobRequest } from './job-request';
import type { ModelProfile } from './profile-run';

/** A training function found for a job: its status and where its files are (a local image folder, or the image reference on Kubernetes). */
export interface LocatedFunction {
  status: FunctionStatus;
  dir: string;
}

/**
 * What admission needs of a training function (`JobService`), and the launcher of its jobs'
 * processes (the round loop): local processes from the node's image store
 * (`training-functions.ts`), or pods (`providers/kubernetes/kube-training.ts`).
 */
export interface TrainingSource extends JobLauncher {
  /** The training function, or a 4xx naming it (missing, not a training function, image gone). */
  locate(fn: string, namespace: string): Promise<LocatedFunction>;
  /** The dataset as the job's harness is given it (`DATASET`), or a 400 naming `field`. */
  datasetPath(dir: string, name: string, field?: string): string;
  /** The model's profile at 1 and 2 workers: cached, or measured now by real runs. */
  profile(dir: string, req: JobRequest, model: string, datasetName: string | undefined, datasetPath: string | undefined): Promise<ModelProfile>;
}

/** The function's status, or a 404 (missing) / 400 (not a training function) naming it. */
export async function trainingFunction(provider: FunctionProvider, fn: string, namespace: string): Promise<FunctionStatus> {
  const s = await provider.get({ name: fn, namespace });
  if (!s) throw functionNotFound(fn, namespace, 'function'); // the jobs API's field
  if (s.kind !== 'training') throw new PlatformError(ErrorCode.Validation, `${fn} is not a training function (its image is ${s.kind})`, 'function');
  return s;
}

/** Profiles by function|model|dataset|batch (v2: wall-time curve with launch and exit costs). */
const PROFILES = 'mlfaas:training-profiles:v2';

/** The cached profile of the key `req`'s function, model, dataset and batch name, or `measure()`'s, cached. */
export async function cachedProfile(redis: Redis, req: JobRequest, model: string, datasetName: string | undefined,
  measure: () => Promise<ModelProfile>): Promise<ModelProfile> {
  const key = `${req.namespace}/${req.function}|${model}|${datasetName ?? ''}|${req.batchSize}`;
  const cached = await redis.hget(PROFILES, key);
  if (cached) return JSON.parse(cached) as ModelProfile;
  const p = await measure();
  await redis.hset(PROFILES, key, JSON.stringify(p));
  return p;
}

/** The harness's environment for a profile run of a job (the starter adds workers, epochs and batch). */
export const profileEnv = (req: JobRequest, model: string, datasetPath: string | undefined): Record<string, string> => ({
  MODEL: model,
  LEARNING_RATE: String(req.learningRate),
  ...(datasetPath ? { DATASET: datasetPath } : {}),
});
