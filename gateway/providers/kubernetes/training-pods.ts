/**
 * Training jobs as pods (the Kubernetes side of `JobLauncher`): one pod per allocation, on the
 * node (and GPUs) the plan names, the hyper-parameters in its env, its checkpoint on a
 * PersistentVolumeClaim so the next allocation resumes anywhere, and FaPES' 15 s grace period:
 * a change of worker count deletes the pod (the kubelet sends SIGTERM, the ml-training harness
 * checkpoints and exits within the grace) and creates the next one with the new `WORKERS`.
 * Progress comes from the pod's log (the harness's JSON lines), the end from its phase.
 */
import { type CoreV1Api, type KubeConfig, Log, type V1Pod } from '@kubernetes/client-node';
import { Writable } from 'node:stream';
import type { JobProcess, RunnerHooks } from '../../../autoscaler/live/training-jobs';
import type { JobRecord } from '../../jobs/job-record';
import { toProgress } from '../../jobs/job-runner';
import { RunLifecycle } from '../../jobs/run-lifecycle';
import { unless } from './api-errors';

export const JOB_LABEL = 'mlfaas.io/job';
export const CHECKPOINT_MOUNT = '/var/lib/mlfaas/checkpoints';
/** FaPES' grace period for a checkpoint on scale change (seconds). */
export const TRAINING_GRACE_S = 15;

export interface TrainingPodOptions {
  namespace: string;
  image: string;
  /** The PersistentVolumeClaim holding every job's checkpoint folder (ReadWriteMany). */
  checkpointClaim: string;
  /** The node the plan places the job on (hostname), if it names one. */
  node?: string;
  /** The GPU indices on that node (NVIDIA_VISIBLE_DEVICES), if it names them. */
  gpus?: number[];
  /** A dataset path the job trains on. */
  dataset?: string;
}

/** The pod for one allocation of `workers` to a job. Pure. */
export function trainingPodFor(rec: JobRecord, workers: number, name: string, o: TrainingPodOptions): V1Pod {
  const env: Record<string, string> = {
    EPOCHS: String(rec.epochs),
    BATCH_SIZE: String(Math.max(rec.batchSize, workers)),
    LEARNING_RATE: String(rec.learningRate),
    CHECKPOINT_DIR: `${CHECKPOINT_MOUNT}/${rec.id}`,
    WORKERS: String(workers),
    MODEL: rec.model,
    JOB_ID: rec.id,
    ...(o.dataset ? { DATASET: o.dataset } : {}),
    ...(o.gpus?.length ? { NVIDIA_VISIBLE_DEVICES: o.gpus.join(',') } : {}),
  };
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: o.namespace, labels: { [JOB_LABEL]: rec.id, faas_function: rec.function, 'app.kubernetes.io/managed-by': 'mlfaas' } },
    spec: {
      restartPolicy: 'Never', // a failed run is restarted by the runner, from the checkpoint
      terminationGracePeriodSeconds: TRAINING_GRACE_S,
      automountServiceAccountToken: false,
      ...(o.node ? { affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [o.node] }] }] } } } } : {}),
      ...(o.gpus?.length ? { runtimeClassName: 'nvidia', tolerations: [{ key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' }] } : {}),
      containers: [
        {
          name: 'train',
          image: o.image,
          env: Object.entries(env).map(([k, v]) => ({ name: k, value: v })),
          resources: o.gpus?.length ? { limits: { 'nvidia.com/gpu': String(o.gpus.length) } } : {},
          volumeMounts: [{ name: 'checkpoints', mountPath: CHECKPOINT_MOUNT }],
          securityContext: { allowPrivilegeEscalation: false },
        },
      ],
      volumes: [{ name: 'checkpoints', persistentVolumeClaim: { claimName: o.checkpointClaim } }],
    },
  };
}

/** One job's pods, one allocation at a time (the local `JobRunner`'s contract). */
export class KubeJob extends RunLifecycle implements JobProcess {
  private pod?: string;
  private generation = 0;
  private failures = 0;

  constructor(
    private readonly kc: KubeConfig,
    private readonly core: CoreV1Api,
    private readonly rec: JobRecord,
    private readonly hooks: RunnerHooks,
    private readonly opts: TrainingPodOptions,
  ) {
    super((t) => hooks.log(t));
  }

  protected async startRun(n: number): Promise<void> {
    const name = `job-${this.rec.id.slice(0, 8).toLowerCase()}-${++this.generation}`;
    await this.core.createNamespacedPod({ namespace: this.opts.namespace, body: trainingPodFor(this.rec, n, name, this.opts) });
    this.pod = name;
    void this.follow(name);
  }

  /** Reads the pod's harness lines until its container ends, then settles the run by its phase. */
  private async follow(name: string): Promise<void> {
    let done = false;
    let rest = '';
    const hooks = this.hooks;
    const sink = new Writable({
      write(chunk: Buffer, _e, cb) {
        const lines = (rest + chunk.toString('utf8')).split('\n');
        rest = lines.pop()!;
        for (const line of lines) {
          if (!line.startsWith('{')) {
            if (line) hooks.log(line);
            continue;
          }
          try {
            const l = JSON.parse(line) as { type: string } & Record<string, unknown>;
            if (l.type === 'progress') hooks.progress(toProgress(l));
            else if (l.type === 'done') done = true;
            else if (l.type === 'log' || l.type === 'error') hooks.log(String(l.message ?? line));
          } catch {
            hooks.log(line);
          }
        }
        cb();
      },
    });
    const ended = new Promise<void>((r) => sink.on('finish', () => r()));
    // the log is there once the container runs: until then the API answers 400 (ContainerCreating)
    for (let i = 0; this.pod === name; i++) {
      const p = await this.read(name);
      if (!p) return;
      if (p.status?.phase && p.status.phase !== 'Pending') break;
      await new Promise((r) => setTimeout(r, Math.min(1000, 50 * 2 ** i)));
    }
    if (this.pod !== name) return;
    await new Log(this.kc).log(this.opts.namespace, name, 'train', sink, { follow: true }).catch(() => sink.end());
    await ended;
    if (this.pod !== name) return; // deleted on purpose for a new allocation
    const phase = (await this.read(name))?.status?.phase;
    if (phase === 'Succeeded' && done) return this.end('completed');
    this.failures++;
    this.hooks.log(`training pod ${name} ended ${phase ?? 'gone'}${this.failures < 3 ? '; restarting from the checkpoint' : '; giving up'}`);
    if (this.failures >= 3) return this.end('failed');
    const w = this.workers;
    this.workers = 0;
    this.pod = undefined;
    setTimeout(() => void this.setWorkers(w), 1000 * this.failures).unref();
  }

  private async read(name: string): Promise<V1Pod | undefined> {
    return unless(this.core.readNamespacedPod({ name, namespace: this.opts.namespace }), 404);
  }

  /** Deletes the current pod (SIGTERM, then the grace period for the checkpoint) and waits until it is gone. */
  private async deletePod(): Promise<void> {
    const name = this.pod;
    if (!name) return;
    this.pod = undefined;
    await unless(this.core.deleteNamespacedPod({ name, namespace: this.opts.namespace, gracePeriodSeconds: TRAINING_GRACE_S }), 404);
    for (let i = 0; (await this.read(name)) && i < 200; i++) await new Promise((r) => setTimeout(r, 100));
  }

  protected stopRun(): Promise<void> {
    return this.deletePod();
  }
}

