import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Job, WaitingError, Worker } from 'bullmq';
import type Redis from 'ioredis';
import { admit, forecast, getPolicy } from '../../autoscaler/training';
import { curveFromProfile } from '../../autoscaler/training/profile';
import type { Placement, SchedulerState, TrainingPolicy } from '../../autoscaler/training/types';
import { ErrorCode, PlatformError } from '../errors';
import { checkModelName } from '../lib/training-names';
import { Lease } from '../lib/lease';
import { patientDuplicate } from '../lib/redis-health';
import type { FunctionProvider } from '../providers/function-provider';
import type { ImageStore } from '../providers/local/image-store';
import { admittedReason, inNodeWords, rejectionBody, SlotNoun, slotNounOf } from './admission-answer';
import { JobRequest } from './job-request';
import { JobRecord, TERMINAL, toTrainingJob } from './job-record';
import { JobRunner, RunnerEnd } from './job-runner';
import { JobStore, TRAINING_QUEUE } from './job-store';
import { TrainingFunctions } from './training-functions';
import type { Isolation } from '../providers/local/replica';

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
  /** Confine training processes as replicas are (own uid, mount namespace, cgroup); absent = none. */
  isolation?: Isolation;
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
  private suspending = false;
  /** Jobs picked up whose record has not been written by a round yet (a resumed job says `resuming` until then). */
  private readonly unreported = new Set<string>();
  /** What a worker slot is called on this node, from the provider. */
  private readonly noun: SlotNoun;
  private readonly functions: TrainingFunctions;

  constructor(
    private readonly redis: Redis,
    provider: FunctionProvider,
    images: ImageStore,
    readonly store: JobStore,
    private readonly opts: TrainingOptions,
    private readonly now: () => number = () => Date.now() / 1000,
  ) {
    // one instance for the service's life: policies with memory across rounds (FaPES's progress
    // correction, pop-up counters) keep it
    this.policy = getPolicy(opts.policy);
    this.noun = slotNounOf(provider.info());
    this.functions = new TrainingFunctions(redis, provider, images, opts.dataDir, opts.isolation);
    this.lease = new Lease(redis, 'mlfaas:training-lock', 5000, () => this.takeLead(), () => this.suspendAll(), (e) =>
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

  /** On taking the lease: say which jobs have no process, then run the queue. */
  private async takeLead(): Promise<void> {
    this.suspending = false;
    await this.markOrphans().catch((e: Error) => process.stderr.write(`[mlfaas] training: marking orphaned jobs: ${e.message}\n`));
    await this.lead();
  }

  private async state(): Promise<SchedulerState> {
    const live = (await this.store.list()).filter((r) => !TERMINAL.has(r.state));
    // a job's end runs a round at once (runOnce), so its slots are free from its completion on
    return { cluster: this.cluster, slotSeconds: this.opts.slotSeconds, roundOnCompletion: true, jobs: live.map((r) => toTrainingJob(r)) };
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
    const { dir, status: fn } = await this.functions.locate(req.function, req.namespace);
    const label = (k: string) => (k in fn.annotations ? { value: fn.annotations[k], field: `annotations.${k}` } : k in fn.labels ? { value: fn.labels[k], field: `labels.${k}` } : undefined);
    const fnModel = label('mlfaas.model');
    const model = req.model ?? (fnModel ? checkModelName(fnModel.value, fnModel.field) : 'default');
    const fnDataset = label('mlfaas.dataset');
    const dataset = req.dataset ?? fnDataset?.value;
    const datasetPath = dataset === undefined ? undefined : this.functions.datasetPath(dir, dataset, req.dataset !== undefined ? 'dataset' : fnDataset!.field);
    const prof = await this.functions.profile(dir, req, model, dataset, datasetPath);
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
      launchSeconds: prof.launchSeconds,
      exitSeconds: prof.exitSeconds,
      curve: { gpus: [...curve.gpus], iterPerSec: [...curve.iterPerSec] },
    };
    const job = toTrainingJob(rec);
    const st = await this.state();
    const d = admit(job, st, nowS, this.opts.policy);
    if (!d.admitted) {
      const alone = forecast(getPolicy(this.opts.policy), { ...st, jobs: [job] }, nowS).completion[id];
      return { status: 409, body: rejectionBody(d, { job, admitted: st.jobs, now: nowS, capacity: this.opts.slots, noun: this.noun, alone }) };
    }
    // what the live loop will do (a fresh policy instance: the live one's memory stays untouched)
    const f = forecast(getPolicy(this.opts.policy), { ...st, jobs: [...st.jobs, job] }, nowS);
    const predicted = f.completion[id];
    rec.plannedRounds = f.workersPerRound[id] ?? [];
    if (predicted !== undefined) rec.predictedCompletion = iso(predicted);
    const reason = admittedReason(job, d, predicted, nowS, this.noun);
    rec.reasons.push(reason);
    const plan = {
      slotSeconds: this.opts.slotSeconds,
      workersPerRound: rec.plannedRounds,
      predictedCompletion: rec.predictedCompletion ?? null,
      predictedSeconds: predicted === undefined ? null : Math.ceil(predicted - nowS),
      ...(job.deadline !== undefined ? { guaranteedCompletion: iso(d.plan.predictedCompletion + (job.launchSeconds ?? 0) + (job.exitSeconds ?? 0)) } : {}),
    };
    const body = { id, state: 'admitted', dryRun, plan, reason, job: rec };
    if (dryRun) return { status: 200, body };
    mkdirSync(rec.checkpointDir, { recursive: true });
    await this.store.create(rec);
    return { status: 201, body };
  }

  /** BullMQ processor: one admitted job from admission (or restart) to its end. */
  private async run(j: Job): Promise<string> {
    const id = (j.data as { id: string }).id;
    let end: string;
    try {
      end = await this.runOnce(id);
    } catch (e) {
      // a job that cannot run must not stay "live" and block admission forever
      await this.finishRecord(id, 'failed', (e as Error).message).catch(() => undefined);
      throw e;
    }
    if (end !== 'suspended') return end;
    // A clean stop hands the job back to the queue, so the next scheduler resumes it at once
    // rather than after this lock expires. If that fails (Redis away, lock lost), the job stays
    // active and the stalled-job check resumes it after MLFAAS_TRAINING_LOCK_MS, as after a crash.
    if (j.token) await j.moveToWait(j.token).catch(() => undefined);
    throw new WaitingError();
  }

  private async runOnce(id: string): Promise<string> {
    const rec = await this.store.get(id);
    if (!rec || TERMINAL.has(rec.state)) return rec?.state ?? 'missing';
    const { dir } = await this.functions.locate(rec.function, rec.namespace);
    // resolved again at every launch: the store may have changed since admission
    const env: Record<string, string> = rec.dataset ? { DATASET: this.functions.datasetPath(dir, rec.dataset) } : {};
    const runner = new JobRunner(rec, dir, {
      progress: (p) => {
        void this.store.setProgress(id, p).catch(() => undefined);
        void this.store.event(id, { type: 'progress', time: new Date().toISOString(), data: { ...p } }).catch(() => undefined);
      },
      log: (t) => void this.store.event(id, { type: 'log', time: new Date().toISOString(), data: { text: t } }).catch(() => undefined),
    }, env, await this.functions.sandbox(rec.function, rec.namespace));
    this.runners.set(id, runner);
    this.unreported.add(id);
    if (this.suspending) void runner.suspend(); // a shutdown began while this job was being picked up
    await this.store.update(id, (r) => (r.workers = 0));
    void this.round();
    const end = await runner.ended;
    this.runners.delete(id);
    this.unreported.delete(id);
    if (end === 'suspended') {
      await this.store.markResuming(id, 'the training service stopped: the job checkpointed and resumes from its checkpoint when a training service runs again');
      return 'suspended';
    }
    if (end === 'cancelled') {
      // stopped because its record ended elsewhere (cancelled by any gateway, or already final)
      const state = (await this.store.get(id))?.state ?? 'missing';
      if (state !== 'cancelled') return state;
    }
    await this.finishRecord(id, end);
    void this.round();
    if (end === 'failed') throw new Error('training process failed 3 times');
    return end;
  }

  /**
   * On taking the lead: jobs recorded as holding workers have no process (any earlier holder is
   * gone: it lost the lease and stopped them, or died). A clean stop already said `resuming`.
   */
  private async markOrphans(): Promise<void> {
    for (const r of await this.store.list()) {
      if (TERMINAL.has(r.state) || (r.workers === 0 && r.state !== 'running')) continue;
      const left = await this.store.lockSecondsLeft(r.id);
      const when = left > 0 ? `once that service's lock on it expires (in ${left} s)` : 'now';
      const reason = `no process runs it: the training service that ran it stopped without a clean shutdown; it resumes from its last checkpoint ${when}`;
      await this.store.markResuming(r.id, reason).catch(() => undefined);
    }
  }


  /** Final state, once: a cancel recorded by any gateway is never overwritten. */
  private async finishRecord(id: string, end: Exclude<RunnerEnd, 'suspended'>, error?: string): Promise<void> {
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
    let predicted: Record<string, number> | undefined;
    for (const j of running) {
      const n = d.gpus[j.id] ?? 0;
      const runner = this.runners.get(j.id)!;
      const reason = inNodeWords(d.reasons[j.id] ?? d.reason, this.noun);
      if (runner.workers !== n || this.unreported.has(j.id)) {
        this.unreported.delete(j.id);
        // the forecast plays this allocation forward (relaunch costs included) from the same state
        predicted ??= forecast(getPolicy(this.opts.policy), { ...st, jobs: running }, nowS).completion;
        const done = predicted[j.id];
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
          if (done !== undefined) r.predictedCompletion = iso(done);
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

  /**
   * Stops every job's process (each checkpoints), records the jobs as `resuming` and hands them
   * back to the queue (see `run`), then closes the worker: bounded, whatever hangs.
   */
  private async suspendAll(): Promise<void> {
    this.suspending = true;
    if (this.timer) clearInterval(this.timer);
    await Promise.all([...this.runners.values()].map((r) => r.suspend()));
    const w = this.worker;
    if (w) {
      let t: NodeJS.Timeout | undefined;
      const graceful = await Promise.race([w.close().then(() => true), new Promise<boolean>((r) => (t = setTimeout(() => r(false), 10_000)))]);
      clearTimeout(t);
      if (!graceful) await w.close(true).catch(() => undefined);
    }
    this.runners.clear();
    this.workerConn?.disconnect();
    this.worker = undefined;
  }

  async close(): Promise<void> {
    await this.suspendAll();
    await this.lease.close();
    await this.store.close();
  }
}
