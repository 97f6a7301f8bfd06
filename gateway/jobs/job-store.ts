import { Queue } from 'bullmq';
import type Redis from 'ioredis';
import { JobEvent, JobRecord } from './job-record';

const RECORDS = 'mlfaas:jobs';
const events = (id: string) => `mlfaas:job-events:${id}`;
export const TRAINING_QUEUE = 'mlfaas-training';

/**
 * Job records in Redis (one hash), their event streams, and the BullMQ queue that holds every
 * admitted job until it ends, so a restart of every process finds and resumes them.
 */
export class JobStore {
  readonly queue: Queue;

  constructor(private readonly redis: Redis) {
    this.queue = new Queue(TRAINING_QUEUE, { connection: redis });
  }

  /** Stores a new admitted job and enqueues it durably. */
  async create(rec: JobRecord): Promise<void> {
    await this.redis.hset(RECORDS, rec.id, JSON.stringify(rec));
    await this.queue.add('train', { id: rec.id }, { jobId: rec.id, removeOnComplete: { age: 7 * 24 * 3600 }, removeOnFail: { age: 7 * 24 * 3600 } });
    await this.event(rec.id, { type: 'state', time: rec.submittedAt, data: { state: rec.state } });
  }

  async get(id: string): Promise<JobRecord | undefined> {
    const raw = await this.redis.hget(RECORDS, id);
    return raw ? (JSON.parse(raw) as JobRecord) : undefined;
  }

  async list(): Promise<JobRecord[]> {
    const all = await this.redis.hvals(RECORDS);
    return all.map((v) => JSON.parse(v) as JobRecord).sort((a, b) => a.submittedAt.localeCompare(b.submittedAt));
  }

  /** Read-modify-write of one record (single writer per job: the round loop). */
  async update(id: string, patch: (r: JobRecord) => void): Promise<JobRecord | undefined> {
    const rec = await this.get(id);
    if (!rec) return undefined;
    patch(rec);
    await this.redis.hset(RECORDS, id, JSON.stringify(rec));
    return rec;
  }

  async event(id: string, e: JobEvent): Promise<void> {
    await this.redis.xadd(events(id), 'MAXLEN', '~', '2000', '*', 'e', JSON.stringify(e));
  }

  /** Events after `fromId` ('0' = all), blocking up to `blockMs` on a dedicated connection. */
  async readEvents(conn: Redis, id: string, fromId: string, blockMs: number): Promise<Array<[string, JobEvent]>> {
    const res = (await conn.xread('BLOCK', blockMs, 'STREAMS', events(id), fromId)) as [string, [string, string[]][]][] | null;
    if (!res) return [];
    return res[0][1].map(([eid, f]) => [eid, JSON.parse(f[1]) as JobEvent]);
  }

  /** A separate connection for blocking reads (SSE followers). */
  blockingConnection(): Redis {
    const c = this.redis.duplicate();
    c.on('error', () => undefined);
    return c;
  }

  async close(): Promise<void> {
    await this.queue.close();
  }
}
