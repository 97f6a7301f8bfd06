/**
 * Training jobs as pods (the Kubernetes side of `JobLauncher`): one pod per allocation, on the
 * node (and GPUs) the plan names, the hyper-parameters in its env, its checkpoint on a
 * PersistentVolumeClaim so the next allocation resumes anywhere, and FaPES' 15 s grace period:
 * a change of worker count deletes the pod (the kubelet sends SIGTERM, the ml-training harness
 * checkpoints and exits within the grace) and creates the next one with the new `WORKERS`.
 * Progress comes from the pod's log (the harness's JSON lines), the end from its phase.
 */
import type { CoreV1Api, KubeConfig, V1Pod } from '@kubernetes/client-node';
import type { JobProcess, RunnerHooks, WorkerPlace } from '../../ports/training-jobs';
import type { HarnessLine } from '../../../node-runtime/harness';
import type { JobRecord } from '../../jobs/job-record';
import { jobEnv, toProgress } from '../../../node-runtime/job-runner';
import { RunLifecycle } from '../../../node-runtime/run-lifecycle';
import { VC_LABEL } from './manifests';
import { type PodHarness, startPodHarness } from './pod-harness';

export const JOB_LABEL = 'mlfaas.io/job';
/** The training function of a job's or profile run's pod (not `faas_function`: these pods are not its replicas). */
export const TRAINING_FN_LABEL = 'mlfaas.io/training-function';
export const CHECKPOINT_MOUNT = '/var/lib/mlfaas/checkpoints';
/** FaPES' grace period for a checkpoint on scale change (seconds). */
export const TRAINING_GRACE_S = 15;

export interface TrainingPodOptions {
  namespace: string;
  image: string;
  /** The PersistentVolumeClaim holding every job's checkpoint folder (ReadWriteMany). */
  checkpointClaim: string;
  /** The dataset as the harness resolves it (a path relative to its function folder, or absolute). */
  dataset?: string;
}

/** Where a harness pod runs: the plan's place, or (a profile run) any training node with `gpus` GPUs or `cpus` cores. */
export type PodPlace = Partial<WorkerPlace> & { gpus?: number };

/** A pod running the harness of `o.image` with `env`, at `place`; its checkpoint folder on the claim, or scratch (`emptyDir`) without one. Pure. */
export function harnessPod(name: string, labels: Record<string, string>, env: Record<string, string>,
  o: { namespace: string; image: string; checkpointClaim?: string }, place?: PodPlace): V1Pod {
  const devices = place?.devices ?? [];
  const gpus = devices.length || place?.gpus || 0;
  const all = { ...env, ...(devices.length ? { NVIDIA_VISIBLE_DEVICES: devices.join(',') } : {}) };
  const cpu = place?.cpus ? String(place.cpus) : undefined;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: o.namespace, labels: { ...labels, 'app.kubernetes.io/managed-by': 'mlfaas' } },
    spec: {
      restartPolicy: 'Never', // a failed run is restarted by the runner, from the checkpoint
      terminationGracePeriodSeconds: TRAINING_GRACE_S,
      automountServiceAccountToken: false,
      affinity: {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [{
              matchExpressions: [place?.node
                ? { key: 'kubernetes.io/hostname', operator: 'In', values: [place.node] }
                : { key: VC_LABEL, operator: 'In', values: ['training'] }],
            }],
          },
        },
      },
      ...(gpus ? { runtimeClassName: 'nvidia', tolerations: [{ key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' }] } : {}),
      containers: [
        {
          name: 'train',
          image: o.image,
          env: Object.entries(all).map(([k, v]) => ({ name: k, value: v })),
          // the plan's slots are what the job holds: GPUs, or cores the kubelet enforces as a CFS quota
          resources: gpus ? { limits: { 'nvidia.com/gpu': String(gpus) } } : cpu ? { requests: { cpu }, limits: { cpu } } : {},
          volumeMounts: [{ name: 'checkpoints', mountPath: CHECKPOINT_MOUNT }],
          securityContext: { allowPrivilegeEscalation: false },
        },
      ],
      volumes: [o.checkpointClaim ? { name: 'checkpoints', persistentVolumeClaim: { claimName: o.checkpointClaim } } : { name: 'checkpoints', emptyDir: {} }],
    },
  };
}

/** The pod for one allocation of `workers` to a job, at the place the plan names. Pure. */
export function trainingPodFor(rec: JobRecord, workers: number, name: string, o: TrainingPodOptions, place?: WorkerPlace): V1Pod {
  const env = { ...jobEnv(rec, workers, `${CHECKPOINT_MOUNT}/${rec.id}`), ...(o.dataset ? { DATASET: o.dataset } : {}) };
  return harnessPod(name, { [JOB_LABEL]: rec.id, [TRAINING_FN_LABEL]: rec.function }, env, o, place);
}

/** One job's pods, one allocation at a time (the local `JobRunner`'s contract). */
export class KubeJob extends RunLifecycle implements JobProcess {
  private pod?: PodHarness;
  private generation = 0;

  constructor(
    private readonly kc: KubeConfig,
    private readonly core: CoreV1Api,
    private readonly rec: JobRecord,
    private readonly hooks: RunnerHooks,
    private readonly opts: TrainingPodOptions,
  ) {
    super((t) => hooks.log(t));
  }

  protected startRun(n: number, place?: WorkerPlace): void {
    const name = `job-${this.rec.id.slice(0, 8).toLowerCase()}-${++this.generation}`;
    let done = false;
    const onLine = (l: HarnessLine) => {
      if (l.type === 'progress') this.hooks.progress(toProgress(l));
      else if (l.type === 'done') done = true;
      else if (l.type === 'log' || l.type === 'error') this.hooks.log(String(l.message ?? JSON.stringify(l)));
    };
    const pod = startPodHarness(this.kc, this.core, trainingPodFor(this.rec, n, name, this.opts, place), onLine, (t) => this.hooks.log(t));
    this.pod = pod;
    void pod.exited.then((code) => {
      if (this.pod !== pod) return; // deleted on purpose for a new allocation
      this.pod = undefined;
      if (code === null) {
        // gone without an exit: evicted (its node reclaimed for inference, drained) or deleted by
        // someone else. Not a failure: it checkpointed in its grace period, and the loop's next
        // round starts it again where the plan says.
        this.hooks.log(`training pod ${name} was evicted or deleted; the next round places the job again`);
        this.workers = 0;
        this.place = undefined;
        return;
      }
      this.allocationEnded(code === 0 && done, `training pod ${name} ended with exit code ${code}`);
    });
  }

  /** Deletes the current pod (SIGTERM, then the grace period for the checkpoint) and waits until it is gone. */
  protected async stopRun(): Promise<void> {
    const pod = this.pod;
    this.pod = undefined;
    await pod?.kill(TRAINING_GRACE_S);
  }
}
