import { Queue } from 'bullmq';
import type Redis from 'ioredis';
import { followStream, StreamEntry } from '../lib/follow-stream';
import type { FinalState, JobBook } from '../ports/training-jobs';
import { JobEvent, JobProgress, JobRecord, TERMINAL } from './job-record';

const RECORDS = 'mlfaas:jobs';
/** Progress lives apart from the record: the runtime's reports never race the scheduler's writes. */
const PROGRESS = 'mlfaas:job-progress';
const events = (id: string) => `mlfaas:job-events:${id}`;
export const TRAINING_QUEUE = 'mlfaas-training';

/**
 * Job records in Redis (one hash), their event streams, and the BullMQ queue that holds every
 * admitted job until it ends, so a restart of every process finds and resumes them. The jobs API
 * writes admissions and cancels here; the training round loop reads and records through it.
 */
export class JobStore implements JobBook {
  readonly queue: Queue;
  readonly queueName = TRAINING_QUEUE;

  constructor(private readonly redis: Redis) {
    this.queue = new Queue(TRAINING_QUEUE, { connection: redis });
    this.queue.on('error', () => undefined); // an outage surfaces per request (503), not per reconnect
  }

  /** Stores a new admitted job and enqueues it durably. */
  async create(rec: JobRecord): Promise<void> {
    await this.redis.hset(RECORDS, rec.id, JSON.stringify(rec));
    await this.queue.add('train', { id: rec.id }, { jobId: rec.id, removeOnComplete: { age: 7 * 24 * 3600 }, removeOnFail: { age: 7 * 24 * 3600 } });
    await this.event(rec.id, { type: 'state', time: rec.submittedAt, data: { state: rec.state } });
  }

  async get(id: string): Promise<JobRecord | undefined> {
    const [raw, prog] = await Promise.all([this.redis.hget(RECORDS, id), this.redis.hget(PROGRESS, id)]);
    if (!raw) return undefined;
    const rec = JSON.parse(raw) as JobRecord;
    if (prog) rec.progress = JSON.parse(prog) as JobProgress;
    return rec;
  }

  async list(): Promise<JobRecord[]> {
    const [all, prog] = await Promise.all([this.redis.hgetall(RECORDS), this.redis.hgetall(PROGRESS)]);
    return Object.entries(all)
      .map(([id, v]) => ({ ...(JSON.parse(v) as JobRecord), ...(prog[id] ? { progress: JSON.parse(prog[id]) as JobProgress } : {}) }))
      .sort((a, b) => a.submittedAt.localeCompare(b.submittedAt));
  }

  async setProgress(id: string, p: JobProgress): Promise<void> {
    await this.redis.hset(PROGRESS, id, JSON.stringify(p));
  }

  /**
   * Read-modify-write of one record's scheduler fields, atomic (WATCH/MULTI, retried): a cancel
   * from another gateway and the round loop cannot undo each other.
   */
  async update(id: string, patch: (r: JobRecord) => void): Promise<JobRecord | undefined> {
    for (let attempt = 0; attempt < 20; attempt++) {
      // queued only while this new connection opens; a fail-fast parent still fails fast (no retries)
      const conn = this.redis.duplicate({ enableOfflineQueue: true });
      conn.on('error', () => undefined);
      try {
        await conn.watch(RECORDS);
        const raw = await conn.hget(RECORDS, id);
        if (!raw) return undefined;
        const rec = JSON.parse(raw) as JobRecord;
        delete rec.progress;
        patch(rec);
        const ok = await conn.multi().hset(RECORDS, id, JSON.stringify(rec)).exec();
        if (ok) return (await this.get(id)) ?? rec;
      } finally {
        conn.disconnect();
      }
    }
    throw new Error(`job ${id}: too much contention updating its record`);
  }

  /** Seconds until the BullMQ lock a scheduler holds on the job expires (0: none held). */
  async lockSecondsLeft(id: string): Promise<number> {
    const ms = await this.redis.pttl(`${this.queue.toKey(id)}:lock`);
    return ms > 0 ? Math.ceil(ms / 1000) : 0;
  }

  /** No process runs the job now: state `resuming`, workers 0, with the reason as an allocation and events. */
  async markResuming(id: string, reason: string): Promise<void> {
    const time = new Date().toISOString();
    let changed = false;
    await this.update(id, (r) => {
      if (TERMINAL.has(r.state) || r.state === 'resuming') return;
      changed = true;
      r.state = 'resuming';
      r.workers = 0;
      r.allocations.push({ time, workers: 0, reason });
    });
    if (changed) {
      await this.event(id, { type: 'state', time, data: { state: 'resuming', reason } });
      await this.event(id, { type: 'allocation', time, data: { workers: 0, gpus: [], reason } });
    }
  }

  /** Final state, once: a final state already recorded (a cancel by any gateway) is never overwritten. */
  async finish(id: string, end: FinalState, error?: string): Promise<void> {
    let changed = false;
    await this.update(id, (r) => {
      if (TERMINAL.has(r.state)) return;
      changed = true;
      r.state = end;
      r.workers = 0;
      r.finishedAt = new Date().toISOString();
      if (error) r.error = error;
    });
    if (changed) await this.event(id, { type: 'state', time: new Date().toISOString(), data: { state: end, ...(error ? { error } : {}) } });
  }

  async event(id: string, e: JobEvent): Promise<void> {
    await this.redis.xadd(events(id), 'MAXLEN', '~', '2000', '*', 'e', JSON.stringify(e));
  }

  /** The job's events after `fromId` ('0' = all), then live, until `signal` aborts. */
  follow(id: string, fromId: string, signal: AbortSignal): AsyncGenerator<StreamEntry[]> {
    return followStream(this.redis, events(id), fromId, signal);
  }

  async close(): Promise<void> {
    await this.queue.close();
  }
}
