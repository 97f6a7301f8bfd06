/**
 * Training functions on Kubernetes: what admission needs of a function (its image, its datasets
 * as the harness resolves them, a profile measured by two real runs as pods on a training node)
 * and the launcher of its jobs as pods (`KubeJob`), for the round loop in the autoscaler process.
 */
import type { CoreV1Api, KubeConfig, V1Node } from '@kubernetes/client-node';
import { randomBytes } from 'node:crypto';
import type Redis from 'ioredis';
import type { RunnerHooks } from '../../ports/training-jobs';
import type { JobRecord } from '../../jobs/job-record';
import type { JobRequest } from '../../jobs/job-request';
import { type HarnessStarter, type ModelProfile, profileModel } from '../../jobs/profile-run';
import type { TrainingCapacity, TrainingNodes } from '../../jobs/training-capacity';
import { cachedProfile, type LocatedFunction, profileEnv, trainingFunction, type TrainingSource } from '../../jobs/training-source';
import { checkDatasetName } from '../../lib/training-names';
import { cpuCores } from '../../../node-runtime/cgroups';
import type { FunctionProvider } from '../function-provider';
import { VC_LABEL } from './manifests';
import { startPodHarness } from './pod-harness';
import { CHECKPOINT_MOUNT, harnessPod, KubeJob, TRAINING_FN_LABEL } from './training-pods';

export interface KubeTrainingOptions {
  /** The PersistentVolumeClaim (in each function namespace) that holds the jobs' checkpoints. */
  checkpointClaim: string;
  /** Bound of one profile run (pod creation, scheduling, image pull and two epochs), ms. */
  profileTimeoutMs: number;
}

export class KubeTrainingFunctions implements TrainingSource {
  constructor(
    private readonly kc: KubeConfig,
    private readonly core: CoreV1Api,
    private readonly redis: Redis,
    private readonly provider: FunctionProvider,
    private readonly capacity: TrainingCapacity,
    private readonly opts: KubeTrainingOptions,
  ) {}

  /** `dir` is the function's image. */
  async locate(fn: string, namespace: string): Promise<LocatedFunction> {
    const s = await trainingFunction(this.provider, fn, namespace);
    return { status: s, dir: s.image };
  }

  /** The name as given: the harness resolves it against its function folder in the image; a missing one fails the profile run (a 400 naming the dataset). */
  datasetPath(_image: string, name: string, field = 'dataset'): string {
    return checkDatasetName(name, field);
  }

  async profile(image: string, req: JobRequest, model: string, datasetName: string | undefined, datasetPath: string | undefined): Promise<ModelProfile> {
    return cachedProfile(this.redis, req, model, datasetName, async () => {
      const nodes = await this.capacity.now();
      return profileModel(this.profileStarter(image, req.namespace, req.function, nodes), profileEnv(req, model, datasetPath), req.batchSize,
        this.opts.profileTimeoutMs);
    });
  }

  /** Profile runs as pods on any training node, at the run's worker count in GPUs (or cores), scratch checkpoint. */
  profileStarter(image: string, namespace: string, fn: string, nodes: TrainingNodes): HarnessStarter {
    return (env, onLine, onText) => {
      const workers = Number(env.WORKERS);
      const name = `profile-${fn.slice(0, 30)}-${randomBytes(4).toString('hex')}`;
      const pod = harnessPod(name, { [TRAINING_FN_LABEL]: fn, 'mlfaas.io/profile': 'true' }, { ...env, CHECKPOINT_DIR: `${CHECKPOINT_MOUNT}/profile` },
        { namespace, image }, nodes.gpuDevices ? { gpus: workers } : { cpus: workers });
      const run = startPodHarness(this.kc, this.core, pod, onLine, onText);
      // a profile pod is deleted when it ends, whatever its end, before its result counts
      const exited = run.exited.then(async (code) => {
        await run.kill(0).catch((e: Error) => onText(`profile pod ${name}: delete: ${e.message}`));
        return code;
      });
      return { exited, kill: () => run.kill(0) };
    };
  }

  /** The job's pods, none started yet: the function's image is resolved again at every launch. */
  async launch(rec: JobRecord, hooks: RunnerHooks): Promise<KubeJob> {
    const { status } = await this.locate(rec.function, rec.namespace);
    return new KubeJob(this.kc, this.core, rec, hooks,
      { namespace: rec.namespace, image: status.image, checkpointClaim: this.opts.checkpointClaim, ...(rec.dataset ? { dataset: rec.dataset } : {}) });
  }
}

const floorPow2 = (n: number) => (n >= 1 ? 2 ** Math.floor(Math.log2(n)) : 0);
const ready = (n: V1Node) => !n.spec?.unschedulable && n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');

/**
 * The training virtual cluster as the policies plan on it: the Ready, schedulable nodes labelled
 * `mlfaas.io/vc=training`, sorted by name, each with as many slots as the smallest of them has
 * GPUs (`nvidia.com/gpu` allocatable), rounded down to a power of two (buddy placement); on
 * nodes without GPUs a slot is a core: `slotsPerNode`, at most the smallest node's allocatable
 * CPUs. Pure.
 */
export function trainingNodesOf(nodes: readonly V1Node[], slotsPerNode: number): TrainingNodes {
  const vc = nodes.filter((n) => n.metadata?.labels?.[VC_LABEL] === 'training' && ready(n)).sort((a, b) => a.metadata!.name!.localeCompare(b.metadata!.name!));
  const gpus = vc.map((n) => Number(n.status?.allocatable?.['nvidia.com/gpu'] ?? 0));
  const gpuDevices = vc.length > 0 && gpus.every((g) => g > 0);
  const per = gpuDevices ? Math.min(...gpus) : Math.min(slotsPerNode, ...vc.map((n) => Math.floor(cpuCores(n.status?.allocatable?.cpu ?? '0'))));
  return { spec: { nodes: vc.length, gpusPerNode: vc.length ? floorPow2(per) : 0 }, nodes: vc.map((n) => n.metadata!.name!), gpuDevices };
}

/** The training nodes from the API (a node list, at most every `cacheMs`). */
export function kubeTrainingCapacity(core: CoreV1Api, slotsPerNode: number, cacheMs = 2000): TrainingCapacity {
  let last: { at: number; nodes: Promise<TrainingNodes> } | undefined;
  return {
    now() {
      if (!last || Date.now() - last.at > cacheMs) {
        const nodes = core.listNode({ labelSelector: `${VC_LABEL}=training` }).then((l) => trainingNodesOf(l.items, slotsPerNode));
        last = { at: Date.now(), nodes };
        nodes.catch(() => (last = undefined));
      }
      return last.nodes;
    },
  };
}
