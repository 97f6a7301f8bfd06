/**
 * Training jobs over REST on the local platform: admission with a plan or a counter-offer, real
 * data-parallel training of the digits MLP, elastic re-allocation through checkpoints, SSE
 * progress, cancel, and resuming after the whole platform restarts.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildFunction } from '../../gateway/cli/build';
import { readStack } from '../../gateway/cli/stack';
import { sseData } from '../../gateway/cli/jobs';
import { JobEvent, JobRecord } from '../../gateway/jobs/job-record';
import { eventually, testGateway, testRedis, TestPlatform } from '../helpers/platform';

const ROOT = join(__dirname, '../..');
// one worker slot: a deadline job must take it from a best-effort one
const ENV = { MLFAAS_TRAINING_SLOT_S: '1', MLFAAS_TRAINING_SLOTS: '1', MLFAAS_TRAINING_LOCK_MS: '1500' };

/** Reads an SSE stream until `until` returns true or the stream ends. */
async function sse(url: string, until: (e: JobEvent) => boolean, timeoutMs: number): Promise<JobEvent[]> {
  const ac = new AbortController();
  const t = setTimeout(() => ac.abort(), timeoutMs);
  const out: JobEvent[] = [];
  try {
    const res = await fetch(url, { signal: ac.signal });
    expect(res.headers.get('content-type')).toMatch(/text\/event-stream/);
    for await (const e of sseData<JobEvent>(res.body!)) {
      out.push(e);
      if (until(e)) return out;
    }
  } catch {
    // aborted
  } finally {
    clearTimeout(t);
    ac.abort();
  }
  return out;
}

describe('training jobs API', () => {
  let redis: Awaited<ReturnType<typeof testRedis>>;
  let p: TestPlatform;
  const dataDir = mkdtempSync(join(tmpdir(), 'mlfaas-jobs-'));
  const submit = (body: unknown, q = '') => p.json('POST', `/system/jobs${q}`, body);
  const job = async (id: string) => (await (await p.get(`/system/jobs/${id}`)).json()) as JobRecord;

  beforeAll(async () => {
    redis = await testRedis();
    p = await testGateway(redis.url, ENV, dataDir);
    const stack = readStack(join(ROOT, 'stack.yml'));
    const fn = stack.functions.find((f) => f.name === 'digits-train')!;
    buildFunction(fn, stack.file, p.cfg.templatesDir, p.images);
    const dep = { service: 'digits-train', image: fn.image, labels: {}, annotations: fn.annotations };
    expect((await p.json('POST', '/system/functions', dep)).status).toBe(202);
  }, 60000);
  afterAll(async () => {
    await p?.stop();
    await redis?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  test.each([
    { name: 'no function', body: { length: 3 }, field: 'function' },
    { name: 'both length and iterations', body: { function: 'digits-train', length: 3, iterations: 10 }, field: 'length' },
    { name: 'length not an integer', body: { function: 'digits-train', length: 2.5 }, field: 'length' },
    { name: 'deadline in the past', body: { function: 'digits-train', length: 3, deadline: '2020-01-01T00:00:00Z' }, field: 'deadline' },
    { name: 'deadline garbage', body: { function: 'digits-train', length: 3, deadline: 'tomorrow' }, field: 'deadline' },
    { name: 'negative learning rate', body: { function: 'digits-train', length: 3, learning_rate: -1 }, field: 'learning_rate' },
    { name: 'batch size zero', body: { function: 'digits-train', length: 3, batch_size: 0 }, field: 'batch_size' },
  ])('400 for $name', async ({ body, field }) => {
    const res = await submit(body);
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { field: string } }).error.field).toBe(field);
  });

  it('404 for an unknown function and 400 for an inference function', async () => {
    expect((await submit({ function: 'ghost', length: 1 })).status).toBe(404);
  });

  it('dry run answers the plan without enqueuing; an impossible deadline gets 409 with a counter-offer', async () => {
    const dry = await submit({ function: 'digits-train', length: 3, deadline: 600, batch_size: 32 }, '?dryRun=true');
    expect(dry.status).toBe(200);
    const body = (await dry.json()) as { plan: { workersPerRound: number[]; predictedCompletion: string }; dryRun: boolean };
    expect(body.dryRun).toBe(true);
    // the guaranteed plan is ElasticFlow's minimum satisfactory share: it may start late, never past the deadline
    expect(body.plan.workersPerRound).toHaveLength(10);
    expect(Date.parse(body.plan.predictedCompletion)).toBeGreaterThan(Date.now());
    expect(Date.parse(body.plan.predictedCompletion)).toBeLessThanOrEqual(Date.now() + 600_000);
    expect((await (await p.get('/system/jobs')).json()) as unknown[]).toEqual([]);
    const no = await submit({ function: 'digits-train', length: 5000, deadline: 2, batch_size: 32 });
    expect(no.status).toBe(409);
    const why = (await no.json()) as { error: { code: string; field: string }; earliestFeasibleDeadline: string };
    expect(why.error).toEqual(expect.objectContaining({ code: 'deadline_infeasible', field: 'deadline' }));
    expect(Date.parse(why.earliestFeasibleDeadline)).toBeGreaterThan(Date.now() + 2000);
  }, 60000);

  it('trains an admitted job for real, streaming progress over SSE', async () => {
    const res = await submit({ function: 'digits-train', length: 4, deadline: 300, batch_size: 32, learning_rate: 0.1 });
    expect(res.status).toBe(201);
    const { id, plan } = (await res.json()) as { id: string; plan: { predictedCompletion: string } };
    expect(plan.predictedCompletion).toBeTruthy();
    const events = await sse(`${p.gw.url}/system/jobs/${id}/events`, (e) => e.type === 'state' && e.data.state === 'completed', 60000);
    expect(events.some((e) => e.type === 'allocation' && (e.data.workers as number) > 0)).toBe(true);
    const progress = events.filter((e) => e.type === 'progress');
    expect(progress.length).toBeGreaterThanOrEqual(1);
    const rec = await job(id);
    expect(rec.state).toBe('completed');
    expect(rec.progress!.epoch).toBe(4);
    expect(rec.progress!.accuracy!).toBeGreaterThan(0.8);
    expect(rec.allocations[0]).toEqual(expect.objectContaining({ workers: expect.any(Number), reason: expect.any(String) }));
    // the CLI's progress bar replays the same stream
    // (async: the gateway answering it runs in this process)
    const child = spawn(process.execPath, [join(ROOT, 'bin/mlfaas'), 'jobs', 'watch', id, '--gateway', p.gw.url]);
    let stderr = '';
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    const status = await new Promise<number | null>((r) => child.once('exit', r));
    const cli = { status, stderr };
    if (cli.status !== 0) console.log(cli.stderr);
    expect(cli.status).toBe(0);
    expect(cli.stderr).toMatch(/\[#+\] 100% epoch 4\/4/);
    expect(cli.stderr).toMatch(new RegExp(`${id}: completed`));
  }, 90000);

  it('preempts a best-effort job for a deadline job (checkpoint), resumes it after, and cancels keeping the checkpoint', async () => {
    const long = await submit({ function: 'digits-train', model: 'mlp-wide', length: 400, batch_size: 32 });
    expect(long.status).toBe(201);
    const longId = ((await long.json()) as { id: string }).id;
    expect(await eventually(async () => ((await job(longId)).progress?.epoch ?? 0) >= 1, 30000, 200)).toBe(true);
    const urgent = await submit({ function: 'digits-train', length: 3, deadline: 120, batch_size: 32 });
    expect(urgent.status).toBe(201);
    const urgentId = ((await urgent.json()) as { id: string }).id;
    expect(await eventually(async () => (await job(urgentId)).state === 'completed', 60000, 250)).toBe(true);
    const rec1 = await job(longId);
    const w = rec1.allocations.map((a) => a.workers);
    expect(w).toContain(0); // gave its slot away...
    expect(await eventually(async () => (await job(longId)).workers === 1, 20000, 200)).toBe(true); // ...and got it back
    const before = (await job(longId)).progress!.epoch;
    expect(await eventually(async () => ((await job(longId)).progress?.epoch ?? 0) > before, 30000, 200)).toBe(true); // resumed, not restarted
    const cancel = await p.json('DELETE', `/system/jobs/${longId}`, undefined);
    expect(cancel.status).toBe(200);
    const rec = await job(longId);
    expect(rec.state).toBe('cancelled');
    expect(existsSync(rec.checkpointDir)).toBe(true);
  }, 150000);

  it('resumes an admitted job from its checkpoint after every platform process restarts', async () => {
    const res = await submit({ function: 'digits-train', model: 'mlp-wide', length: 60, batch_size: 32 });
    const id = ((await res.json()) as { id: string }).id;
    expect(await eventually(async () => ((await job(id)).progress?.epoch ?? 0) >= 2, 60000, 200)).toBe(true);
    await p.stop(); // checkpoints on SIGTERM; the job stays admitted in Redis
    const epochAtStop = (JSON.parse((await redis_get(id))!) as { epoch: number }).epoch;
    const restartedAt = new Date().toISOString();
    p = await testGateway(redis.url, ENV, dataDir);
    const done = await eventually(async () => (await job(id)).state === 'completed', 90000, 500);
    expect(done).toBe(true);
    const rec = await job(id);
    expect(rec.progress!.epoch).toBe(60);
    expect(epochAtStop).toBeGreaterThanOrEqual(2);
    // resumed from the checkpoint: no epoch after the restart repeats one finished before it
    const after = (await sse(`${p.gw.url}/system/jobs/${id}/events`, (e) => e.type === 'state' && e.data.state === 'completed', 10000)).filter(
      (e) => e.type === 'progress' && e.time >= restartedAt,
    );
    expect(after.length).toBeGreaterThan(0);
    expect(Math.min(...after.map((e) => e.data.epoch as number))).toBeGreaterThan(epochAtStop);
  }, 180000);

  async function redis_get(id: string): Promise<string | null> {
    const { connectRedis } = await import('../../gateway/lib/redis-server');
    const r = connectRedis(redis.url);
    try {
      return await r.hget('mlfaas:job-progress', id);
    } finally {
      r.disconnect();
    }
  }
});
