/**
 * Lending in the fixed-cluster runner (issue 24): with it on, every setQuota the runner makes
 * passes limit 1 (the quota stays the request), a new replica's included, and the events name the
 * request and the limit; with it off, request = limit (no limit passed). A recording provider and
 * a fixed controller; Redis is real (the runner's counters, events and admission table).
 */
import type Redis from 'ioredis';
import { ClusterRunner } from '../../../autoscaler/multitenant/live/runner';
import { clusterLending, limitStale, quotaWords } from '../../../autoscaler/multitenant/live/lending';
import { connectRedis } from '../../../gateway/lib/redis-server';
import { ScalingEvents } from '../../../gateway/registry/scaling-events';
import { testRedis } from '../../helpers/platform';
import { fixed, NS, recordingProvider } from './runner-fixtures';

describe('fixed-cluster lending: the runner', () => {
  let redisSrv: Awaited<ReturnType<typeof testRedis>>;
  let redis: Redis;
  beforeAll(async () => {
    redisSrv = await testRedis();
    redis = connectRedis(redisSrv.url);
  });
  afterAll(async () => {
    redis?.disconnect();
    await redisSrv?.stop();
  });
  beforeEach(() => redis.flushall());

  it('on: every setQuota passes limit 1 with the quota as request, a new replica\'s too; Σ requests ≤ capacity; events say both', async () => {
    const { provider, calls, reps } = recordingProvider({ a: 1, b: 1 });
    const runner = new ClusterRunner(redis, provider, fixed([{ replicas: 2, quota: 0.6 }, { replicas: 1, quota: 0.5 }]),
      { capacity: 2, intervalMs: 1000, defaultSloMs: 500, lending: true });
    const r1 = await runner.tick(10_000);
    expect(ClusterRunner.cores(r1)).toBeLessThanOrEqual(2 + 1e-9);
    // a scaled up: its new replica starts at quota 1 and the next tick sets its request, with limit 1
    expect(reps.get('a')!.length).toBe(2);
    await runner.tick(11_000);
    expect(calls.length).toBeGreaterThanOrEqual(3);
    for (const c of calls) {
      expect(c.limit).toBe(1);
      expect(c.args).toBe(4);
    }
    expect(calls.find((c) => c.id === 'a-1')).toMatchObject({ quota: 0.6, limit: 1 });
    expect(reps.get('a')!.map((r) => [r.quota, r.limit])).toEqual([[0.6, 1], [0.6, 1]]);
    expect(reps.get('b')!.map((r) => [r.quota, r.limit])).toEqual([[0.5, 1]]);
    const ev = await new ScalingEvents(redis).list({ name: 'a', namespace: NS }, 100);
    const q = ev.filter((e) => e.action === 'quota');
    expect(q.length).toBeGreaterThan(0);
    for (const e of q) expect(e.reason).toMatch(/quota 0\.6 core \(limit 1 core: borrows idle CPU\)/);
    // a third tick changes nothing: no call (the limits are known)
    const before = calls.length;
    await runner.tick(12_000);
    expect(calls.length).toBe(before);
  });

  it('on: a replica already at its quota but held to request = limit gets limit 1 (no event)', async () => {
    const { provider, calls, reps } = recordingProvider({ a: 1 });
    Object.assign(reps.get('a')![0], { quota: 0.5, limit: 0.5 });
    const runner = new ClusterRunner(redis, provider, fixed([{ replicas: 1, quota: 0.5 }]),
      { capacity: 2, intervalMs: 1000, defaultSloMs: 500, lending: true });
    await runner.tick(10_000);
    expect(calls).toEqual([{ fn: 'a', id: 'a-0', quota: 0.5, limit: 1, args: 4 }]);
  });

  it('off: request = limit (no limit passed), and a lent replica is taken back to its quota', async () => {
    const { provider, calls, reps } = recordingProvider({ a: 1, b: 1 });
    Object.assign(reps.get('b')![0], { quota: 0.5, limit: 1 });
    const runner = new ClusterRunner(redis, provider, fixed([{ replicas: 1, quota: 0.6 }, { replicas: 1, quota: 0.5 }]),
      { capacity: 2, intervalMs: 1000, defaultSloMs: 500, lending: false });
    await runner.tick(10_000);
    for (const c of calls) expect(c.args).toBe(3);
    expect(reps.get('a')!.map((r) => [r.quota, r.limit])).toEqual([[0.6, 0.6]]);
    expect(reps.get('b')!.map((r) => [r.quota, r.limit])).toEqual([[0.5, 0.5]]);
    const ev = await new ScalingEvents(redis).list({ name: 'a', namespace: NS }, 100);
    expect(ev.find((e) => e.action === 'quota')?.reason).toMatch(/quota 0\.6 core \(limit 0\.6 core: request = limit, nothing lent\)/);
  });
});

describe('fixed-cluster lending: the setting', () => {
  test.each([
    { controller: 'mlfaas', setting: undefined, want: true },
    { controller: 'grid', setting: undefined, want: false },
    { controller: 'mlfaas', setting: false, want: false },
    { controller: 'grid', setting: true, want: true },
  ])('$controller, MLFAAS_CLUSTER_LENDING=$setting → $want', ({ controller, setting, want }) => {
    expect(clusterLending(controller, setting)).toBe(want);
  });

  it('words and staleness', () => {
    expect(quotaWords(0.6, 1)).toBe('quota 0.6 core (limit 1 core: borrows idle CPU)');
    expect(quotaWords(0.6, undefined)).toBe('quota 0.6 core (limit 0.6 core: request = limit, nothing lent)');
    expect(quotaWords(0.6, 1, 2)).toBe('quota 0.6 core (limit 1 core: borrows idle CPU; the provider\'s 0.3/0.5 of each of its 2 cores)');
    expect(limitStale(undefined, 0.5, 1)).toBe(true);
    expect(limitStale(undefined, 0.5, undefined)).toBe(false);
    expect(limitStale(1, 0.5, 1)).toBe(false);
    expect(limitStale(1, 0.5, undefined)).toBe(true);
    expect(limitStale(0.5, 0.5, undefined)).toBe(false);
    // in the provider's units of a 2-core replica: limit 1 core = 0.5, request = limit 0.5 core = 0.25
    expect(limitStale(0.5, 0.5, 1, 2)).toBe(false);
    expect(limitStale(1, 0.5, 1, 2)).toBe(true);
    expect(limitStale(0.25, 0.5, undefined, 2)).toBe(false);
  });
});
