import { Job, WaitingError, Worker } from 'bullmq';
import type Redis from 'ioredis';
import { Lease } from '../../gateway/lib/lease';
import { patientDuplicate } from '../../gateway/lib/redis-health';
import { inNodeWords, SlotNoun } from '../../gateway/jobs/admission-answer';
import { schedulerState, TERMINAL } from '../../gateway/jobs/job-record';
import { fixedCapacity, placeOf, samePlace, type TrainingCapacity, type TrainingNodes } from '../../gateway/jobs/training-capacity';
import { forecast, getPolicy } from '../training';
import type { Placement, SchedulerState, TrainingPolicy } from '../training/types';
import type { JobBook, JobLauncher, JobProcess } from '../../gateway/ports/training-jobs';
import { type Clock, systemClock } from '../../gateway/ports/clock';

export interface TrainingLoopOptions {
  /** Registered training policy (`elasticflow` by default). */
  policy: string;
  /** Scheduling round, s. */
  slotSeconds: number;
  /** Worker slots of the local node (the "GPUs" training jobs get; a power of two). */
  slots: number;
  /** BullMQ lock: a dead scheduler's jobs resume after this, ms. */
  lockMs: number;
  /** What a worker slot is called on this node (the policies say "GPU"). */
  noun: SlotNoun;
  /** The training nodes (a cluster's); default: one node of `slots`. */
  capacity?: TrainingCapacity;
  /** Run at the start of each round while leading (on Kubernetes: FaPES' loans and reclaims of nodes). */
  beforeRound?: () => Promise<void>;
}

const iso = (s: number) => new Date(s * 1000).toISOString();

/**
 * The training round loop of this node: every slot (and at once when a job starts or ends) the
 * registered policy (ElasticFlow by default) allocates worker slots over the live jobs, and each
 * job's process is restarted from its checkpoint at its new count; every change is recorded with
 * its reason. Admitted jobs wait in a BullMQ queue in Redis: whichever process holds the training
 * lease runs them, and a restart resumes them. It runs in the process of the node's agent, since
 * the jobs' processes are its children, confined as the agent confines replicas.
 */
export class TrainingLoop {
  private runners = new Map<string, JobProcess>();
  private placement: Placement = {};
  private worker?: Worker;
  private workerConn?: Redis;
  private readonly lease: Lease;
  private timer?: NodeJS.Timeout;
  private rounds: Promise<void> = Promise.resolve();
  private readonly policy: TrainingPolicy;
  private readonly capacity: TrainingCapacity;
  private suspending = false;
  /** Jobs picked up whose record has not been written by a round yet (a resumed job says `resuming` until then). */
  private readonly unreported = new Set<string>();

  constructor(
    private readonly redis: Redis,
    private readonly book: JobBook,
    private readonly launcher: JobLauncher,
    private readonly opts: TrainingLoopOptions,
    /** The platform's clock (ms); rounds read it once and plan in seconds. */
    private readonly clock: Clock = systemClock,
  ) {
    // one instance for the loop's life: policies with memory across rounds (FaPES's progress
    // correction, pop-up counters) keep it
    this.policy = getPolicy(opts.policy);
    this.capacity = opts.capacity ?? fixedCapacity(opts.slots);
    this.lease = new Lease(redis, 'mlfaas:training-lock', 5000, () => this.takeLead(), () => this.suspendAll(), (e) =>
      process.stderr.write(`[mlfaas] training lease: ${e.message}\n`),
    );
  }

  async start(): Promise<void> {
    await this.lease.start();
  }

  /**
   * How often the queue looks for jobs whose holder died (lock gone): a sixth of the lock, but not
   * under 5 s, nor under the lock itself when that is shorter (short test locks keep the check they
   * always had: one lock).
   */
  private get stallCheckMs(): number {
    return Math.max(Math.round(this.opts.lockMs / 6), Math.min(this.opts.lockMs, 5000));
  }

  private async lead(): Promise<void> {
    this.workerConn = patientDuplicate(this.redis); // BullMQ workers need maxRetriesPerRequest: null
    this.worker = new Worker(this.book.queueName, (j) => this.run(j), {
      connection: this.workerConn,
      concurrency: 1000, // admission, not the queue, limits work: every admitted job is active
      lockDuration: this.opts.lockMs,
      // how soon a dead holder's job is found once its lock expired: BullMQ moves a job back after
      // two checks without a lock, so at lockMs a resume took up to 3 locks (90 s, not 30)
      stalledInterval: this.stallCheckMs,
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

  private async state(): Promise<{ st: SchedulerState; nodes: TrainingNodes }> {
    const nodes = await this.capacity.now();
    return { st: schedulerState(await this.book.list(), nodes.spec, this.opts.slotSeconds), nodes };
  }

  /** BullMQ processor: one admitted job from admission (or restart) to its end. */
  private async run(j: Job): Promise<string> {
    const id = (j.data as { id: string }).id;
    let end: string;
    try {
      end = await this.runOnce(id);
    } catch (e) {
      // a job that cannot run must not stay "live" and block admission forever
      await this.book.finish(id, 'failed', (e as Error).message).catch(() => undefined);
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
    const rec = await this.book.get(id);
    if (!rec || TERMINAL.has(rec.state)) return rec?.state ?? 'missing';
    const runner = await this.launcher.launch(rec, {
      progress: (p) => {
        void this.book.setProgress(id, p).catch(() => undefined);
        void this.book.event(id, { type: 'progress', time: new Date(this.clock.now()).toISOString(), data: { ...p } }).catch(() => undefined);
      },
      log: (t) => void this.book.event(id, { type: 'log', time: new Date(this.clock.now()).toISOString(), data: { text: t } }).catch(() => undefined),
    });
    this.runners.set(id, runner);
    this.unreported.add(id);
    if (this.suspending) void runner.suspend(); // a shutdown began while this job was being picked up
    await this.book.update(id, (r) => (r.workers = 0));
    void this.round();
    const end = await runner.ended;
    this.runners.delete(id);
    this.unreported.delete(id);
    if (end === 'suspended') {
      await this.book.markResuming(id, 'the training service stopped: the job checkpointed and resumes from its checkpoint when a training service runs again');
      return 'suspended';
    }
    if (end === 'cancelled') {
      // stopped because its record ended elsewhere (cancelled by any gateway, or already final)
      const state = (await this.book.get(id))?.state ?? 'missing';
      if (state !== 'cancelled') return state;
    }
    await this.book.finish(id, end);
    void this.round();
    if (end === 'failed') throw new Error('training process failed 3 times');
    return end;
  }

  /**
   * On taking the lead: jobs recorded as holding workers have no process (any earlier holder is
   * gone: it lost the lease and stopped them, or died). A clean stop already said `resuming`.
   */
  private async markOrphans(): Promise<void> {
    for (const r of await this.book.list()) {
      if (TERMINAL.has(r.state) || (r.workers === 0 && r.state !== 'running')) continue;
      const left = await this.book.lockSecondsLeft(r.id);
      const check = Math.ceil((2 * this.stallCheckMs) / 1000);
      const when = left > 0 ? `once that service's lock on it expires (in ${left} s), within ${check} s of that` : `within ${check} s`;
      const reason = `no process runs it: the training service that ran it stopped without a clean shutdown; it resumes from its last checkpoint ${when}`;
      await this.book.markResuming(r.id, reason).catch(() => undefined);
    }
  }

  /** One scheduling round (serialised): allocate, place, apply, record reasons. */
  round(): Promise<void> {
    this.rounds = this.rounds.then(() => this.roundOnce()).catch(() => undefined);
    return this.rounds;
  }

  private async roundOnce(): Promise<void> {
    if (!this.lease.isHeld) return;
    await this.opts.beforeRound?.().catch((e: Error) => process.stderr.write(`[mlfaas] training: before the round: ${e.message}\n`));
    const { st, nodes } = await this.state();
    const live = new Set(st.jobs.map((j) => j.id));
    for (const [id, runner] of this.runners) if (!live.has(id)) void runner.cancel(); // cancelled elsewhere
    const running = st.jobs.filter((j) => this.runners.has(j.id));
    if (running.length === 0) return;
    const p = this.policy;
    const nowS = this.clock.now() / 1000;
    const d = p.allocation.allocate({ ...st, jobs: running }, nowS);
    this.placement = p.placement.place(d.gpus, st.cluster, this.placement);
    let predicted: Record<string, number> | undefined;
    for (const j of running) {
      const n = d.gpus[j.id] ?? 0;
      const runner = this.runners.get(j.id)!;
      const reason = inNodeWords(d.reasons[j.id] ?? d.reason, this.opts.noun);
      const place = placeOf(nodes, this.placement[j.id]);
      if (runner.workers !== n || this.unreported.has(j.id) || (place && n > 0 && !samePlace(place, runner.place))) {
        this.unreported.delete(j.id);
        // the forecast plays this allocation forward (relaunch costs included) from the same state
        predicted ??= forecast(getPolicy(this.opts.policy), { ...st, jobs: running }, nowS).completion;
        const done = predicted[j.id];
        const time = new Date(nowS * 1000).toISOString();
        let live = true;
        await this.book.update(j.id, (r) => {
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
        await this.book.event(j.id, { type: 'allocation', time, data: { workers: n, gpus: this.placement[j.id] ?? [], ...(place ? { node: place.node } : {}),
          reason } });
        void runner.setWorkers(n, place);
      }
    }
  }

  /** Stops the job's process if this loop runs it (a cancel answered by this process's API); else the leader's next round does. */
  async cancelLocal(id: string): Promise<void> {
    await this.runners.get(id)?.cancel();
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
  }
}
