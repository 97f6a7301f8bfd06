import { join } from 'node:path';
import type Redis from 'ioredis';
import { ErrorCode, PlatformError } from '../errors';
import type { FunctionProvider } from '../providers/function-provider';
import type { ImageStore } from '../providers/local/image-store';
import type { Isolation } from '../providers/local/replica';
import { datasetStoreDir, resolveDataset } from './dataset-store';
import type { RunnerHooks } from '../ports/training-jobs';
import type { HarnessSandbox } from '../../node-runtime/harness';
import type { JobRecord } from './job-record';
import { JobRequest } from './job-request';
import { JobRunner } from '../../node-runtime/job-runner';
import { localHarness, ModelProfile, profileModel } from './profile-run';
import { cachedProfile, LocatedFunction, profileEnv, trainingFunction, TrainingSource } from './training-source';

/**
 * Where a training function's processes run from: its image, its datasets, its sandbox, and
 * the cached profile of a model of it (what admission needs of a function), and the launcher of
 * a job's process on this node (what the training round loop needs).
 */
export class TrainingFunctions implements TrainingSource {
  constructor(
    private readonly redis: Redis,
    private readonly provider: FunctionProvider,
    private readonly images: ImageStore,
    private readonly dataDir: string,
    private readonly isolation?: Isolation,
  ) {}

  /** The training function and its image directory, or a 4xx naming the function. */
  async locate(fn: string, namespace: string): Promise<LocatedFunction> {
    const s = await trainingFunction(this.provider, fn, namespace);
    const m = this.images.find(s.image);
    if (!m?.dir) throw new PlatformError(ErrorCode.ImageNotFound, `image ${s.image} of ${fn} is not in the store`, 'function');
    return { status: s, dir: m.dir };
  }

  /** The dataset name's real path in the function's image or the dataset store (400 otherwise). */
  datasetPath(dir: string, name: string, field = 'dataset'): string {
    return resolveDataset(name, { image: join(dir, 'function'), store: datasetStoreDir(this.dataDir) }, field);
  }

  /** How this function's training processes are confined, or undefined (no isolation here). */
  async sandbox(fn: string, namespace: string): Promise<Omit<HarnessSandbox, 'id'> | undefined> {
    const iso = this.isolation;
    if (!iso) return undefined;
    return { uid: await iso.uidFor({ name: fn, namespace }), cgroups: iso.cgroups, limits: iso.limits, datasetsDir: datasetStoreDir(this.dataDir) };
  }

  /** The model's profile at 1 and 2 workers: cached, or measured now by real runs. */
  async profile(dir: string, req: JobRequest, model: string, datasetName: string | undefined, datasetPath: string | undefined): Promise<ModelProfile> {
    return cachedProfile(this.redis, req, model, datasetName, async () =>
      profileModel(localHarness(dir, await this.sandbox(req.function, req.namespace)), profileEnv(req, model, datasetPath), req.batchSize),
    );
  }

  /** The job's process, not started yet: the function's image and dataset are resolved again at every launch (the store may have changed since admission). */
  async launch(rec: JobRecord, hooks: RunnerHooks): Promise<JobRunner> {
    const { dir } = await this.locate(rec.function, rec.namespace);
    const env: Record<string, string> = rec.dataset ? { DATASET: this.datasetPath(dir, rec.dataset) } : {};
    return new JobRunner(rec, dir, hooks, env, await this.sandbox(rec.function, rec.namespace));
  }
}
