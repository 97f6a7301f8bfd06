import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type Redis from 'ioredis';
import { ErrorCode, PlatformError } from '../errors';
import { checkModelName } from '../lib/training-names';
import { admittedReason, rejectionBody, SlotNoun } from './admission-answer';
import { JobRequest } from './job-request';
import { JobRecord, rfc3339, schedulerState, TERMINAL, trainingJobOf } from './job-record';
import { JobStore } from './job-store';
import { type JobRefusal, RefusalStore } from './refusal-store';
import { fixedCapacity, maxWorkersOf, type TrainingCapacity } from './training-capacity';
import type { TrainingSource } from './training-source';
import type { TrainingScheduler } from '../ports/training-scheduler';
import type { LocalTrainingLoop } from '../ports/training-jobs';
import { type Clock, systemClock } from '../ports/clock';

export interface JobServiceOptions {
  /** Registered training policy (`mlfaas` by default): admission plans as the round loop will. */
  policy: string;
  /** Scheduling round, s. */
  slotSeconds: number;
  /** Worker slots of the local node (the "GPUs" training jobs get; a power of two). */
  slots: number;
  dataDir: string;
  /** What a worker slot is called on this node, from the provider. */
  noun: SlotNoun;
  /** The training nodes (a cluster's); default: one node of `slots`. */
  capacity?: TrainingCapacity;
  /** Admission, forecast and scaling curves (the training scheduler, injected by the composition root). */
  scheduler: TrainingScheduler;
  /** Told each admission answer (`/metrics`' mlfaas_training_admissions_total). */
  onAdmission?(functionName: string, admitted: boolean): void;
}

/** What `POST /system/jobs` answers. */
export interface SubmitResult {
  status: 200 | 201 | 409;
  body: Record<string, unknown>;
}

const iso = (s: number) => new Date(s * 1000).toISOString();
const ADMIT_LOCK = 'mlfaas:training-admit-lock';

/**
 * The training jobs' HTTP side (`/system/jobs`): deadline admission with its plan or a
 * counter-offer, cancel, and the store the reads go to. Admitted jobs wait in the store's queue;
 * the training round loop (behind the `LocalTrainingLoop` port) of whichever process holds the
 * training lease runs them, so a gateway without the agent answers the API all the same.
 */
export class JobService {
  private admitting: Promise<void> = Promise.resolve();
  /** The last refusals (409s, not dry runs): `GET /system/jobs/refusals`. */
  readonly refusals: RefusalStore;
  private readonly streams = new AbortController();

  constructor(
    private readonly redis: Redis,
    private readonly functions: TrainingSource,
    readonly store: JobStore,
    private readonly opts: JobServiceOptions,
    /** The round loop when it runs in this process: a cancel stops the job's process before answering. */
    private readonly loop?: LocalTrainingLoop,
    /** The platform's clock (ms); admission reads it once and plans in seconds. */
    readonly clock: Clock = systemClock,
  ) {
    this.refusals = new RefusalStore(redis);
  }

  /** Aborts at shutdown: the jobs' SSE streams end on it so the server can close with a browser attached. */
  get closing(): AbortSignal {
    return this.streams.signal;
  }

  /** Ends every open event stream (called first at shutdown). */
  endStreams(): void {
    this.streams.abort();
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
      let r: SubmitResult;
      try {
        r = await this.admitOne(req, dryRun);
      } catch (e) {
        // a cluster without training capacity refuses with a 409 too: kept with its reason
        if (!dryRun && e instanceof PlatformError && e.code === ErrorCode.Conflict)
          await this.refuse(req, { error: { code: e.code, message: e.message }, earliestFeasibleDeadline: null, earliestFeasibleDeadlineSeconds: null });
        throw e;
      }
      this.opts.onAdmission?.(`${req.function}.${req.namespace}`, r.status !== 409);
      if (r.status === 409 && !dryRun) await this.refuse(req, r.body);
      return r;
    } finally {
      await this.redis.eval("if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0", 1, ADMIT_LOCK, token)
        .catch(() => undefined);
      release();
    }
  }

  /** Keeps a refusal; a store that fails to keep it does not change the answer. */
  private async refuse(req: JobRequest, body: Record<string, unknown>): Promise<void> {
    const err = (body.error ?? {}) as { code?: string; message?: string };
    const r: JobRefusal = {
      time: new Date(this.clock.now()).toISOString(),
      function: req.function,
      namespace: req.namespace,
      ...(req.deadlineS !== undefined ? { requestedDeadline: rfc3339(req.deadlineS) } : {}),
      earliestFeasibleDeadline: (body.earliestFeasibleDeadline as string | null | undefined) ?? null,
      earliestFeasibleDeadlineSeconds: (body.earliestFeasibleDeadlineSeconds as number | null | undefined) ?? null,
      reason: err.message ?? 'refused',
      code: err.code ?? 'conflict',
      ...(req.maxWorkers !== undefined ? { maxWorkers: req.maxWorkers } : {}),
    };
    await this.refusals.add(r).catch(() => undefined);
  }

  private async admitOne(req: JobRequest, dryRun: boolean): Promise<SubmitResult> {
    const { dir, status: fn } = await this.functions.locate(req.function, req.namespace);
    const label = (k: string) =>
      (k in fn.annotations ? { value: fn.annotations[k], field: `annotations.${k}` } : k in fn.labels ? { value: fn.labels[k],
        field: `labels.${k}` } : undefined);
    const fnModel = label('mlfaas.model');
    const model = req.model ?? (fnModel ? checkModelName(fnModel.value, fnModel.field) : 'default');
    const fnDataset = label('mlfaas.dataset');
    const dataset = req.dataset ?? fnDataset?.value;
    const datasetPath = dataset === undefined ? undefined : this.functions.datasetPath(dir, dataset, req.dataset !== undefined ? 'dataset' : fnDataset!.field);
    const prof = await this.functions.profile(dir, req, model, dataset, datasetPath);
    const stepsPerEpoch = Math.max(1, Math.ceil(prof.trainExamples / req.batchSize));
    const epochs = req.epochs ?? Math.ceil(req.iterations! / stepsPerEpoch);
    const nodes = await (this.opts.capacity ?? fixedCapacity(this.opts.slots)).now();
    if (nodes.spec.nodes * nodes.spec.gpusPerNode === 0)
      throw new PlatformError(ErrorCode.Conflict,
        'no training capacity: no node is in the training virtual cluster (label one: kubectl label node <name> mlfaas.io/vc=training)', 'function');
    const maxWorkers = maxWorkersOf(req.maxWorkers, nodes);
    const { scheduler } = this.opts;
    const curve = scheduler.curveFromProfile(prof.samples, maxWorkers);
    const id = randomUUID();
    const nowS = this.clock.now() / 1000;
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
      ...(req.deadlineS ? { deadline: rfc3339(req.deadlineS) } : {}),
      ...(req.softDeadlineS ? { softDeadline: rfc3339(req.softDeadlineS) } : {}),
      state: 'admitted',
      workers: 0,
      plannedRounds: [],
      slotSeconds: this.opts.slotSeconds,
      allocations: [],
      reasons: [],
      checkpointDir: join(this.opts.dataDir, 'checkpoints', id),
      trainExamples: prof.trainExamples,
      launchSeconds: prof.launchSeconds,
      exitSeconds: prof.exitSeconds,
      curve: { gpus: [...curve.gpus], iterPerSec: [...curve.iterPerSec] },
    };
    // the deadlines in seconds as parsed (the record's RFC3339 strings are what the API answers)
    const job = trainingJobOf(rec, { deadline: req.deadlineS, softDeadline: req.softDeadlineS });
    const st = schedulerState(await this.store.list(), nodes.spec, this.opts.slotSeconds);
    const d = scheduler.admit(job, st, nowS, this.opts.policy);
    if (!d.admitted) {
      const alone = scheduler.forecast(this.opts.policy, { ...st, jobs: [job] }, nowS).completion[id];
      return { status: 409,
        body: rejectionBody(d, { job, admitted: st.jobs, now: nowS, capacity: nodes.spec.nodes * nodes.spec.gpusPerNode, noun: this.opts.noun, alone }) };
    }
    // what the round loop will do (a fresh policy instance: the loop's own memory stays untouched)
    const f = scheduler.forecast(this.opts.policy, { ...st, jobs: [...st.jobs, job] }, nowS);
    const predicted = f.completion[id];
    rec.plannedRounds = f.workersPerRound[id] ?? [];
    if (predicted !== undefined) rec.predictedCompletion = iso(predicted);
    const reason = admittedReason(job, d, predicted, nowS, this.opts.noun);
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

  async cancel(id: string): Promise<JobRecord | undefined> {
    const rec = await this.store.get(id);
    if (!rec) return undefined;
    if (TERMINAL.has(rec.state)) return rec;
    await this.store.finish(id, 'cancelled');
    const updated = await this.store.get(id);
    await this.loop?.cancelLocal(id); // here if this process runs it; else the leader's next round
    await (await this.store.queue.getJob(id))?.remove().catch(() => undefined);
    return updated;
  }

  async close(): Promise<void> {
    await this.store.close();
  }
}
