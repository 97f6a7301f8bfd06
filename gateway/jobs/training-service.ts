import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Job, Worker } from 'bullmq';
import type Redis from 'ioredis';
import { admit, getPolicy, planRounds } from '../../autoscaler/training';
import { curveFromProfile } from '../../autoscaler/training/profile';
import type { Placement, SchedulerState, TrainingJob, TrainingPolicy } from '../../autoscaler/training/types';
import { ErrorCode, functionNotFound, PlatformError } from '../errors';
import { Lease } from '../lib/lease';
import { patientDuplicate } from '../lib/redis-health';
import type { FunctionProvider } from '../providers/function-provider';
import type { ImageStore } from '../providers/local/image-store';
import { JobRequest } from './job-request';
import { JobRecord, TERMINAL } from './job-record';
import { JobRunner } from './job-runner';
import { JobStore, TRAINING_QUEUE } from './job-store';
import { ModelProfile, profileModel } from './profile-run';

export interface TrainingOptions {
  /** Registered training policy (`elasticflow` by default). */
  policy: string;
  /** Scheduling round, s. */
  slotSeconds: number;
  /** Worker slots of the local node (the "GPUs" training jobs get; a power of two). */
  slots: number;
  dataDir: string;
  /** BullMQ lock: a dead scheduler's jobs resume after this, ms. */
  lockMs: number;
}

/** What `POST /system/jobs` answers. */
export interface SubmitResult {
  status: 200 | 201 | 409;
  body: Record<string, unknown>;
}

const iso = (s: number) => new Date(s * 1000).toISOString();
const ADMIT_LOCK = 'mlfaas:training-admit-lock';

/**
 * Training jobs on the local node: deadline admission and goodput-planned elastic allocation by a
 * registered policy (ElasticFlow by default), one process per job run at the allocated worker
 * count, re-launched from its checkpoint whenever the allocation changes. Jobs are BullMQ jobs
 * in Redis: whichever process holds the training lease runs them, and a restart resumes them.
 */
export class TrainingService {
  private runners = new Map<string, JobRunner>();
  private placement: Placement = {};
  private worker?: Worker;
  private workerConn?: Redis;
  private readonly lease: Lease;
  private timer?: NodeJS.Timeout;
  private rounds: Promise<void> = Promise.resolve();
  private readonly policy: TrainingPolicy;
  private admitting: Promise<void> = Promise.resolve();

  constructor(
    private readonly redis: Redis,
    private readonly provider: FunctionProvider,
    private readonly images: ImageStore,
    readonly store: JobStore,
    private readonly opts: TrainingOptions,
    private readonly now: () => number = () => Date.now() / 1000,
  ) {
    // one instance for the service's life: policies with memory across rounds (FaPES's progress
    // correction, pop-up counters) keep it
    this.policy = getPolicy(opts.policy);
    this.lease = new Lease(redis, 'mlfaas:training-lock', 5000, () => this.lead(), () => this.suspendAll(), (e) =>
      process.stderr.write(`[mlfaas] training lease: ${e.message}\n`),
    );
  }

  private get cluster() {
    return { nodes: 1, gpusPerNode: this.opts.slots };
  }

  async start(): Promise<void> {
    await this.lease.start();
  }

  private async lead(): Promise<void> {
    this.workerConn = patientDuplicate(this.redis); // BullMQ workers need maxRetriesPerRequest: null
    this.worker = new Worker(TRAINING_QUEUE, (j) => this.run(j), {
      connection: this.workerConn,
      concurrency: 1000, // admission, not the queue, limits work: every admitted job is active
      lockDuration: this.opts.lockMs,
      stalledInterval: this.opts.lockMs,
      maxStalledCount: 100,
    });
    this.worker.on('error', () => undefined);
    this.timer = setInterval(() => void this.round(), this.opts.slotSeconds * 1000);
    this.timer.unref();
  }

  /** The training function's image directory, or a 4xx naming the function. */
  private async imageDir(fn: string, namespace: string): Promise<string> {
    const s = await this.provider.get({ name: fn, namespace });
    if (!s) throw functionNotFound(fn, namespace);
    if (s.kind !== 'training') throw new PlatformError(ErrorCode.Validation, `${fn} is not a training function (its image is ${s.kind})`, 'function');
    const m = this.images.find(s.image);
    if (!m?.dir) throw new PlatformError(ErrorCode.ImageNotFound, `image ${s.image} of ${fn} is not in the store`, 'function');
    return m.dir;
  }

  private async profile(dir: string, req: JobRequest, model: string): Promise<ModelProfile> {
    const key = `${req.namespace}/${req.function}|${model}|${req.dataset ?? ''}|${req.batchSize}`;
    const cached = await this.redis.hget('mlfaas:training-profiles', key);
    if (cached) return JSON.parse(cached) as ModelProfile;
    const env: Record<string, string> = { MODEL: model, LEARNING_RATE: String(req.learningRate) };
    if (req.dataset) env.DATASET = req.dataset;
    const p = await profileModel(dir, env, req.batchSize);
    await this.redis.hset('mlfaas:training-profiles', key, JSON.stringify(p));
    return p;
  }

  private toJob(r: JobRecord): TrainingJob {
    const deadline = r.deadline ? Date.parse(r.deadline) / 1000 : undefined;
    return {
      id: r.id,
      model: r.model,
      submitTime: Date.parse(r.submittedAt) / 1000,
      iterations: r.iterations,
      doneIterations: Math.min(r.progress?.step ?? 0, r.iterations),
      ...(deadline ? { deadline } : {}),
      ...(r.softDeadline ? { softDeadline: Date.parse(r.softDeadline) / 1000 } : {}),
      batchSize: r.batchSize,
      learningRate: r.learningRate,
      maxGpus: r.maxWorkers,
      curve: r.curve,
      currentGpus: r.workers,
      ...(r.progress?.gradNoiseScale ? { gradientNoiseScale: r.progress.gradNoiseScale } : {}),
    };
  }

  private async state(): Promise<SchedulerState> {
    const live = (await this.store.list()).filter((r) => !TERMINAL.has(r.state));
    return { cluster: this.cluster, slotSeconds: this.opts.slotSeconds, jobs: live.map((r) => this.toJob(r)) };
  }

  /**
   * Admission (and a dry run): 201 with the plan, or 409 with the earliest guaranteed deadline.
   * Admissions run one at a time across gateways (Redis lock), so two concurrent submissions
   * cannot both be promised the same free capacity.
   */
  async submit(req: JobRequest, dryRun: boolean): Promise<SubmitResult> {
    const prev = this.admitting;
    let release!: () => void;
    this.admitting = new Promise<void>((r) => (release = r));
    await prev;
    const token = randomUUID();
    try {
      for (let i = 0; (await this.redis.set(ADMIT_LOCK, token, 'PX', 30_000, 'NX')) !== 'OK'; i++) {
        if (i > 600) throw new PlatformError(ErrorCode.Internal, 'admission is busy; retry');
        await new Promise((r) => setTimeout(r, 50));
      }
      return await this.admitOne(req, dryRun);
    } finally {
      await this.redis.eval("if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0", 1, ADMIT_LOCK, token).catch(() => undefined);
      release();
    }
  }

  private async admitOne(req: JobRequest, dryRun: boolean): Promise<SubmitResult> {
    const dir = await this.imageDir(req.function, req.namespace);
    const fn = await this.provider.get({ name: req.function, namespace: req.namespace });
    const model = req.model ?? fn!.annotations['mlfaas.model'] ?? 'default';
    const dataset = req.dataset ?? fn!.annotations['mlfaas.dataset'];
    const prof = await this.profile(dir, { ...req, dataset }, model);
    const stepsPerEpoch = Math.max(1, Math.ceil(prof.trainExamples / req.batchSize));
    const epochs = req.epochs ?? Math.ceil(req.iterations! / stepsPerEpoch);
    const maxWorkers = Math.min(req.maxWorkers ?? this.opts.slots, this.opts.slots);
    const curve = curveFromProfile(prof.samples, maxWorkers);
    const id = randomUUID();
    const nowS = this.now();
    const rec: JobRecord = {
      id,
      function: req.function,
      namespace: req.namespace,
      model,
      ...(dataset ? { dataset } : {}),
      epochs,
      iterations: req.iterations ?? epochs * stepsPerEpoch,
      batchSize: req.batchSize,
      learningRate: req.learningRate,
      maxWorkers,
      submittedAt: iso(nowS),
      ...(req.deadlineMs ? { deadline: new Date(req.deadlineMs).toISOString() } : {}),
      ...(req.softDeadlineMs ? { softDeadline: new Date(req.softDeadlineMs).toISOString() } : {}),
      state: 'admitted',
      workers: 0,
      plannedRounds: [],
      allocations: [],
      reasons: [],
      checkpointDir: join(this.opts.dataDir, 'checkpoints', id),
      trainExamples: prof.trainExamples,
      curve: { gpus: [...curve.gpus], iterPerSec: [...curve.iterPerSec] },
    };
    const d = admit(this.toJob(rec), await this.state(), nowS, this.opts.policy);
    if (!d.admitted) {
      return {
        status: 409,
        body: {
          error: { code: 'deadline_infeasible', message: d.reason, field: 'deadline' },
          earliestFeasibleDeadline: d.earliestFeasibleDeadline === null ? null : iso(d.earliestFeasibleDeadline),
        },
      };
    }
    rec.plannedRounds = planRounds(d, 10);
    rec.predictedCompletion = iso(d.plan.predictedCompletion);
    rec.reasons.push(d.reason);
    const body = { id, state: 'admitted', dryRun, plan: { slotSeconds: this.opts.slotSeconds, workersPerRound: rec.plannedRounds, predictedCompletion: rec.predictedCompletion }, reason: d.reason, job: rec };
    if (dryRun) return { status: 200, body };
    mkdirSync(rec.checkpointDir, { recursive: true });
    await this.store.create(rec);
    return { status: 201, body };
  }

  /** BullMQ processor: one admitted job from admission (or restart) to its end. */
  private async run(j: Job): Promise<string> {
    const id = (j.data as { id: string }).id;
    try {
      return await this.runOnce(id);
    } catch (e) {
      // a job that cannot run must not stay "live" and block admission forever
      await this.finishRecord(id, 'failed', (e as Error).message).catch(() => undefined);
      throw e;
    }
  }

  private async runOnce(id: string): Promise<string> {
    const rec = await this.store.get(id);
    if (!rec || TERMINAL.has(rec.state)) return rec?.state ?? 'missing';
    const dir = await this.imageDir(rec.function, rec.namespace);
    const runner = new JobRunner(rec, dir, {
      progress: (p) => {
        void this.store.setProgress(id, p).catch(() => undefined);
        void this.store.event(id, { type: 'progress', time: new Date().toISOString(), data: { ...p } }).catch(() => undefined);
      },
      log: (t) => void this.store.event(id, { type: 'log', time: new Date().toISOString(), data: { text: t } }).catch(() => undefined),
    });
    this.runners.set(id, runner);
    await this.store.update(id, (r) => (r.workers = 0));
    void this.round();
    const end = await runner.ended;
    this.runners.delete(id);
    if (end === 'cancelled' && (await this.store.get(id))?.state !== 'cancelled') return 'suspended';
    await this.finishRecord(id, end);
    void this.round();
    if (end === 'failed') throw new Error('training process failed 3 times');
    return end;
  }

  /** Final state, once: a cancel recorded by any gateway is never overwritten. */
  private async finishRecord(id: string, end: 'completed' | 'failed' | 'cancelled', error?: string): Promise<void> {
    let changed = false;
    await this.store.update(id, (r) => {
      if (TERMINAL.has(r.state)) return;
      changed = true;
      r.state = end;
      r.workers = 0;
      r.finishedAt = new Date().toISOString();
      if (error) r.error = error;
    });
    if (changed) await this.store.event(id, { type: 'state', time: new Date().toISOString(), data: { state: end, ...(error ? { error } : {}) } });
  }

  /** One scheduling round (serialised): allocate, place, apply, record reasons. */
  round(): Promise<void> {
    this.rounds = this.rounds.then(() => this.roundOnce()).catch(() => undefined);
    return this.rounds;
  }

  private async roundOnce(): Promise<void> {
    if (!this.lease.isHeld) return;
    const st = await this.state();
    const live = new Set(st.jobs.map((j) => j.id));
    for (const [id, runner] of this.runners) if (!live.has(id)) void runner.cancel(); // cancelled elsewhere
    const running = st.jobs.filter((j) => this.runners.has(j.id));
    if (running.length === 0) return;
    const p = this.policy;
    const nowS = this.now();
    const d = p.allocation.allocate({ ...st, jobs: running }, nowS);
    this.placement = p.placement.place(d.gpus, this.cluster, this.placement);
    for (const j of running) {
      const n = d.gpus[j.id] ?? 0;
      const runner = this.runners.get(j.id)!;
      const plan = d.plans?.[j.id];
      const reason = d.reasons[j.id] ?? d.reason;
      if (runner.workers !== n) {
        const time = new Date(nowS * 1000).toISOString();
        let live = true;
        await this.store.update(j.id, (r) => {
          // the job may have ended (or been cancelled elsewhere) since this round read it
          if (TERMINAL.has(r.state)) {
            live = false;
            return;
          }
          r.workers = n;
          r.state = n > 0 ? 'running' : 'waiting';
          r.allocations.push({ time, workers: n, reason });
          if (plan) r.predictedCompletion = iso(plan.predictedCompletion);
        });
        if (!live) continue;
        await this.store.event(j.id, { type: 'allocation', time, data: { workers: n, gpus: this.placement[j.id] ?? [], reason } });
        void runner.setWorkers(n);
      }
    }
  }

  async cancel(id: string): Promise<JobRecord | undefined> {
    const rec = await this.store.get(id);
    if (!rec) return undefined;
    if (TERMINAL.has(rec.state)) return rec;
    await this.finishRecord(id, 'cancelled');
    const updated = await this.store.get(id);
    await this.runners.get(id)?.cancel(); // here if this process runs it; else the leader's next round
    await (await this.store.queue.getJob(id))?.remove().catch(() => undefined);
    return updated;
  }

  private async suspendAll(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await Promise.all([...this.runners.values()].map((r) => r.suspend()));
    this.runners.clear();
    await this.worker?.close(true);
    this.workerConn?.disconnect();
    this.worker = undefined;
  }

  async close(): Promise<void> {
    await this.suspendAll();
    await this.lease.close();
    await this.store.close();
  }
}
