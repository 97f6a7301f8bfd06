/**
 * Issue 26 (#/jobs): the admission's refusals are kept and listed. A real Redis and the real
 * training scheduler behind `JobService`; the training function is a stand-in (its profile given,
 * no process launched): a 409 (not a dry run) is stored with the requested and the earliest
 * feasible deadline, `GET /system/jobs/refusals` lists it newest first, a dry run's 409 is not
 * kept, bad `limit`s are a 400 naming it, and an admitted job's record carries its round length.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import express, { NextFunction, Request, Response } from 'express';
import type Redis from 'ioredis';
import { trainingScheduler } from '../../autoscaler/training/scheduler';
import { toHttp } from '../../gateway/errors';
import { JobService } from '../../gateway/jobs/job-service';
import { JobStore } from '../../gateway/jobs/job-store';
import type { JobRequest } from '../../gateway/jobs/job-request';
import type { TrainingSource } from '../../gateway/jobs/training-source';
import { catchAsync } from '../../gateway/lib/catch-async';
import { connectRedis } from '../../gateway/lib/redis-server';
import { jobRoutes } from '../../gateway/routes/jobs';
import type { FunctionStatus } from '../../gateway/providers/function-provider';
import { testRedis } from '../helpers/platform';

const status: FunctionStatus = { name: 'tr', namespace: 'openfaas-fn', image: 'tr:1', labels: {}, annotations: {}, replicas: 0, availableReplicas: 0,
  createdAt: '2026-11-27T00:00:00Z', kind: 'training' };
// 1000 examples, batch 10: 100 steps an epoch; 10 it/s on one slot, 18 on two
const source: TrainingSource = {
  locate: async () => ({ status, dir: '/nonexistent' }),
  datasetPath: () => '/nonexistent',
  profile: async () => ({ samples: [{ gpus: 1, iterPerSec: 10 }, { gpus: 2, iterPerSec: 18 }], trainExamples: 1000, launchSeconds: 0, exitSeconds: 0 }),
  launch: async () => { throw new Error('no process in this test'); },
};
const request = (o: Partial<JobRequest>): JobRequest => ({ function: 'tr', namespace: 'openfaas-fn', epochs: 10, batchSize: 10, learningRate: 0.1, ...o });

describe('training refusals', () => {
  let redis: Awaited<ReturnType<typeof testRedis>>;
  let conn: Redis;
  let training: JobService;
  let server: Server;
  let base: string;
  const dataDir = mkdtempSync(join(tmpdir(), 'mlfaas-refusals-'));

  beforeAll(async () => {
    redis = await testRedis();
    conn = connectRedis(redis.url);
    training = new JobService(conn, source, new JobStore(conn), { policy: 'mlfaas', slotSeconds: 7, slots: 2, dataDir, noun: { one: 'worker slot',
      many: 'worker slots' }, scheduler: trainingScheduler });
    const app = express();
    app.use(express.json());
    app.use(catchAsync(jobRoutes(training)));
    app.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => {
      const h = toHttp(err);
      res.status(h.status).set(h.headers).json(h.body);
    });
    server = app.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }, 60000);
  afterAll(async () => {
    server?.closeAllConnections();
    await new Promise((r) => server?.close(r));
    await training?.close();
    conn?.disconnect();
    await redis?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('keeps a 409 with its deadlines and reason, not a dry run\'s, and lists them newest first', async () => {
    const now = Date.now() / 1000;
    const dry = await training.submit(request({ deadlineS: now + 3 }), true);
    expect(dry.status).toBe(409);
    expect(await training.refusals.list()).toEqual([]);
    const first = await training.submit(request({ deadlineS: now + 5 }), false);
    expect(first.status).toBe(409);
    const second = await training.submit(request({ deadlineS: now + 6, maxWorkers: 1 }), false);
    expect(second.status).toBe(409);
    const res = await fetch(`${base}/system/jobs/refusals`);
    expect(res.status).toBe(200);
    const list = (await res.json()) as Array<Record<string, unknown>>;
    expect(list).toHaveLength(2);
    expect(list[0]).toMatchObject({ function: 'tr', namespace: 'openfaas-fn', code: 'deadline_infeasible', maxWorkers: 1,
      requestedDeadline: new Date(Math.round((now + 6) * 1000)).toISOString(), earliestFeasibleDeadline: second.body.earliestFeasibleDeadline });
    expect(list[1].earliestFeasibleDeadline).toBe(first.body.earliestFeasibleDeadline);
    expect(typeof list[1].earliestFeasibleDeadline).toBe('string');
    expect(list[1].reason).toBe((first.body.error as { message: string }).message);
    expect(Date.parse(list[0].time as string)).toBeGreaterThanOrEqual(Date.parse(list[1].time as string));
    const one = (await (await fetch(`${base}/system/jobs/refusals?limit=1`)).json()) as unknown[];
    expect(one).toEqual([list[0]]);
  });

  it.each(['0', '201', 'abc', '-1', '1.5'])('refuses limit=%s with a 400 naming limit', async (limit) => {
    const res = await fetch(`${base}/system/jobs/refusals?limit=${limit}`);
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { field: string } }).error.field).toBe('limit');
  });

  it('records the round length on an admitted job, so its planned rounds have exact times', async () => {
    const ok = await training.submit(request({ epochs: 1 }), false);
    expect(ok.status).toBe(201);
    const rec = await training.store.get(ok.body.id as string);
    expect(rec?.slotSeconds).toBe(7);
    expect(rec?.plannedRounds.length).toBeGreaterThan(0);
    await training.cancel(rec!.id);
  });
});
