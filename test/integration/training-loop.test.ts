/**
 * The training round loop through its seam: a real Redis, the real job store and BullMQ queue,
 * the registered ElasticFlow policy, and a launcher whose processes are stand-ins that do what
 * the loop tells them (the real harness and runner are exercised by `jobs.test.ts`). Checks what
 * the loop records of what it did: allocations with reasons in this node's words, the final
 * state, a cancel from this process and from elsewhere, a job that cannot launch, a clean stop.
 */
import type Redis from 'ioredis';
import type { JobLauncher, JobProcess, RunnerEnd, RunnerHooks } from '../../gateway/ports/training-jobs';
import { TrainingLoop } from '../../autoscaler/live/training-loop';
import type { JobEvent, JobRecord } from '../../gateway/jobs/job-record';
import { JobStore } from '../../gateway/jobs/job-store';
import { connectRedis } from '../../gateway/lib/redis-server';
import { eventually, testRedis } from '../helpers/platform';

/** A job's process that only records the worker counts it is given; the test ends it. */
class StandIn implements JobProcess {
  workers = 0;
  readonly counts: number[] = [];
  readonly ended: Promise<RunnerEnd>;
  stoppedBy?: 'cancel' | 'suspend';
  private resolve!: (e: RunnerEnd) => void;

  constructor(readonly hooks: RunnerHooks) {
    this.ended = new Promise((r) => (this.resolve = r));
  }

  async setWorkers(n: number): Promise<void> {
    this.workers = n;
    this.counts.push(n);
  }

  async cancel(): Promise<void> {
    this.stoppedBy ??= 'cancel';
    this.end('cancelled');
  }

  async suspend(): Promise<void> {
    this.stoppedBy ??= 'suspend';
    this.end('suspended');
  }

  end(e: RunnerEnd): void {
    this.resolve(e);
  }
}

class StandInLauncher implements JobLauncher {
  readonly procs = new Map<string, StandIn>();
  /** Functions that cannot launch (the image is gone), with the error. */
  readonly broken = new Map<string, string>();

  async launch(rec: JobRecord, hooks: RunnerHooks): Promise<JobProcess> {
    const err = this.broken.get(rec.function);
    if (err) throw new Error(err);
    const p = new StandIn(hooks);
    this.procs.set(rec.id, p);
    return p;
  }
}

let seq = 0;
function aRecord(fn = 'trainer'): JobRecord {
  const id = `00000000-0000-4000-8000-${String(++seq).padStart(12, '0')}`;
  return {
    id,
    function: fn,
    namespace: 'openfaas-fn',
    model: 'default',
    epochs: 10,
    iterations: 100_000,
    batchSize: 32,
    learningRate: 0.1,
    maxWorkers: 2,
    submittedAt: new Date().toISOString(),
    state: 'admitted',
    workers: 0,
    plannedRounds: [],
    allocations: [],
    reasons: [],
    checkpointDir: `/tmp/training-loop-test/${id}`,
    trainExamples: 1000,
    curve: { gpus: [1, 2], iterPerSec: [10, 18] },
  };
}

describe('training round loop (autoscaler/live/training-loop.ts)', () => {
  let server: Awaited<ReturnType<typeof testRedis>>;
  let redis: Redis;
  let store: JobStore;
  let launcher: StandInLauncher;
  let loop: TrainingLoop;
  const rec = async (id: string) => (await store.get(id))!;
  const events = async (id: string): Promise<JobEvent[]> =>
    (await redis.xrange(`mlfaas:job-events:${id}`, '-', '+')).map(([, f]) => JSON.parse(f[1]) as JobEvent);

  beforeAll(async () => {
    server = await testRedis();
    redis = connectRedis(server.url);
    store = new JobStore(redis);
    launcher = new StandInLauncher();
    loop = new TrainingLoop(redis, store, launcher,
      { policy: 'mlfaas', slotSeconds: 1, slots: 2, lockMs: 1500, noun: { one: 'worker slot', many: 'worker slots' } });
    await loop.start();
  });
  afterAll(async () => {
    await loop?.close();
    await store?.close();
    redis?.disconnect();
    await server?.stop();
  });

  it("launches an admitted job, gives it worker slots with the reason in this node's words, and records its end", async () => {
    const r = aRecord();
    await store.create(r);
    expect(await eventually(() => (launcher.procs.get(r.id)?.workers ?? 0) > 0, 20000)).toBe(true);
    const p = launcher.procs.get(r.id)!;
    const running = await rec(r.id);
    expect(running).toEqual(expect.objectContaining({ state: 'running', workers: p.workers }));
    expect(running.allocations[0]).toEqual(expect.objectContaining({ workers: p.workers, reason: expect.stringMatching(/worker slot/) }));
    expect(running.allocations.map((a) => a.reason).join('\n')).not.toMatch(/GPU/);
    expect(running.predictedCompletion).toBeDefined();
    expect((await events(r.id)).filter((e) => e.type === 'allocation').map((e) => e.data.workers)).toContain(p.workers);
    // what the process reports goes to the record and the event stream
    p.hooks.progress({ epoch: 1, epochs: 10, step: 500, samples: 16000 });
    expect(await eventually(async () => (await rec(r.id)).progress?.step === 500, 5000)).toBe(true);
    p.end('completed');
    expect(await eventually(async () => (await rec(r.id)).state === 'completed', 10000)).toBe(true);
    expect(await rec(r.id)).toEqual(expect.objectContaining({ workers: 0, finishedAt: expect.any(String) }));
    expect((await events(r.id)).filter((e) => e.type === 'state').map((e) => e.data.state)).toEqual(['admitted', 'completed']);
  }, 30000);

  it('cancelLocal stops the process at once; the cancel recorded first is kept', async () => {
    const r = aRecord();
    await store.create(r);
    expect(await eventually(() => (launcher.procs.get(r.id)?.workers ?? 0) > 0, 20000)).toBe(true);
    await store.finish(r.id, 'cancelled'); // what the jobs API does first
    await loop.cancelLocal(r.id);
    expect(launcher.procs.get(r.id)!.stoppedBy).toBe('cancel');
    // the loop's end of the run must not overwrite the cancel
    await new Promise((res) => setTimeout(res, 1500));
    expect((await rec(r.id)).state).toBe('cancelled');
  }, 30000);

  it('a job cancelled elsewhere (another gateway) is stopped by the next round', async () => {
    const r = aRecord();
    await store.create(r);
    expect(await eventually(() => (launcher.procs.get(r.id)?.workers ?? 0) > 0, 20000)).toBe(true);
    await store.finish(r.id, 'cancelled');
    expect(await eventually(() => launcher.procs.get(r.id)!.stoppedBy === 'cancel', 10000)).toBe(true);
    expect((await rec(r.id)).state).toBe('cancelled');
  }, 30000);

  it('a job that cannot launch fails with the reason instead of staying live', async () => {
    launcher.broken.set('gone', 'image test/gone:1 of gone is not in the store');
    const r = aRecord('gone');
    await store.create(r);
    expect(await eventually(async () => (await rec(r.id)).state === 'failed', 20000)).toBe(true);
    expect((await rec(r.id)).error).toMatch(/not in the store/);
  }, 30000);

  it('a clean stop suspends running jobs and records them as resuming with 0 workers', async () => {
    const r = aRecord();
    await store.create(r);
    expect(await eventually(() => (launcher.procs.get(r.id)?.workers ?? 0) > 0, 20000)).toBe(true);
    await loop.close();
    expect(launcher.procs.get(r.id)!.stoppedBy).toBe('suspend');
    const after = await rec(r.id);
    expect(after).toEqual(expect.objectContaining({ state: 'resuming', workers: 0 }));
    expect(after.allocations.at(-1)!.reason).toMatch(/training service stopped/);
  }, 30000);
});
