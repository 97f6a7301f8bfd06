/**
 * The fixed-cluster runner's units (issue 24): the controllers think in cores, a provider is given
 * fractions of each of the replica's cores (`ReplicaInfo.cores`; absent = 1). The pure conversions,
 * then the runner against a recording provider with the local provider's semantics (setQuota
 * stores quota and limit; endpoints report them back) and a fixed controller; Redis is real.
 */
import type Redis from 'ioredis';
import { ClusterRunner } from '../../../autoscaler/multitenant/live/runner';
import { coreQuotaOf, coresOf, heldCores, providerLimit, providerQuota, providerWords } from '../../../autoscaler/multitenant/live/units';
import { connectRedis } from '../../../gateway/lib/redis-server';
import { ScalingEvents } from '../../../gateway/registry/scaling-events';
import { replicaOf } from '../../../gateway/providers/kubernetes/pods';
import { CPU_BASE_ANNOTATION } from '../../../gateway/providers/kubernetes/manifests';
import { testRedis } from '../../helpers/platform';
import { fixed, NS, recordingProvider, type Rep } from './runner-fixtures';

const UNITS_REASON = 'gave 0.33 core of b to a: utility 1.00 → 1.50';

describe('fixed-cluster units: the conversions', () => {
  test.each([
    { cores: 2, quota: 0.67, pq: 0.335, pl: 0.5 },
    { cores: 1, quota: 0.67, pq: 0.67, pl: 1 },
    { cores: 4, quota: 0.2, pq: 0.05, pl: 0.25 },
    { cores: 2, quota: 1, pq: 0.5, pl: 0.5 },
    // a pod of half a core: it cannot hold more than itself, and its limit is all of it
    { cores: 0.5, quota: 0.67, pq: 1, pl: 1 },
  ])('cores $cores: $quota core → provider quota $pq, lent limit $pl', ({ cores, quota, pq, pl }) => {
    expect(providerQuota(quota, cores)).toBeCloseTo(pq, 12);
    expect(providerLimit(1, quota, cores)).toBeCloseTo(pl, 12);
    expect(providerLimit(undefined, quota, cores)).toBeUndefined();
    expect(providerLimit(1, quota, cores)!).toBeGreaterThanOrEqual(providerQuota(quota, cores));
    expect(heldCores(quota, cores)).toBeCloseTo(Math.min(quota, cores), 9);
  });

  it('reads provider quotas back in cores, exactly; absent or bad cores are 1', () => {
    expect(coresOf({})).toBe(1);
    expect(coresOf({ cores: 0 })).toBe(1);
    expect(coresOf({ cores: NaN })).toBe(1);
    expect(coresOf({ cores: 2 })).toBe(2);
    expect(coreQuotaOf({ quota: 0.335, cores: 2 })).toBe(0.67);
    expect(coreQuotaOf({ quota: 0.67 })).toBe(0.67);
    expect(coreQuotaOf({ quota: providerQuota(0.67, 3), cores: 3 })).toBe(0.67);
    expect(providerWords(0.67, 1, 1)).toBe('');
    expect(providerWords(0.67, 1, 2)).toBe('; the provider\'s 0.335/0.5 of each of its 2 cores');
    expect(providerWords(0.67, undefined, 2)).toBe('; the provider\'s 0.335/0.335 of each of its 2 cores');
  });
});

describe('fixed-cluster units: what the Kubernetes provider reports', () => {
  test.each([
    { base: '2', cores: 2 },
    { base: '500m', cores: 0.5 },
    { base: undefined, cores: undefined },
    { base: 'lots', cores: undefined },
  ])('a pod declaring cpu $base: cores $cores (what setQuota multiplies by)', ({ base, cores }) => {
    const annotations = { 'mlfaas.io/quota': '0.25', ...(base !== undefined ? { [CPU_BASE_ANNOTATION]: base } : {}) };
    const r = replicaOf({ metadata: { name: 'p-1', annotations }, spec: { nodeName: 'n1' }, status: { phase: 'Running' } });
    expect(r.cores).toBe(cores);
    expect(r.quota).toBe(0.25);
  });
});

describe('fixed-cluster units: the runner', () => {
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

  const pairs = (l: Rep[]) => l.map((r) => [r.quota, r.limit]);

  it('lending: 0.67 core on 2 cores → provider 0.335 / 0.5; on 1 core and without cores unchanged; read back in cores; then quiet', async () => {
    const { provider, calls, reps } = recordingProvider({ two: { n: 1, cores: 2 }, one: { n: 1, cores: 1 }, none: { n: 1 } });
    const alloc = [{ replicas: 1, quota: 0.67 }, { replicas: 1, quota: 0.67 }, { replicas: 1, quota: 0.66 }];
    const runner = new ClusterRunner(redis, provider, fixed(alloc, UNITS_REASON), { capacity: 2, intervalMs: 1000, defaultSloMs: 500, lending: true });
    const r1 = await runner.tick(10_000);
    // the first view: the unplaced 2-core replica at the provider's 1 holds 2 cores, seen as one unit
    expect(r1.view.jobs.map((j) => j.quota)).toEqual([1, 1, 1]);
    expect(ClusterRunner.cores(r1)).toBeLessThanOrEqual(2 + 1e-9);
    expect(pairs(reps.get('two')!)).toEqual([[0.335, 0.5]]);
    expect(pairs(reps.get('one')!)).toEqual([[0.67, 1]]);
    expect(pairs(reps.get('none')!)).toEqual([[0.66, 1]]);
    // Σ cores as the providers hold them: exactly what the runner applied
    const held = [...reps.values()].flat().reduce((s, r) => s + coreQuotaOf(r), 0);
    expect(held).toBeCloseTo(2, 9);
    const ev = await new ScalingEvents(redis).list({ name: 'two', namespace: NS }, 100);
    const q = ev.find((e) => e.action === 'quota')!;
    expect(q).toMatchObject({ from: 2, to: 0.67 });
    expect(q.reason).toContain('quota 0.67 core (limit 1 core: borrows idle CPU; the provider\'s 0.335/0.5 of each of its 2 cores)');
    const before = calls.length;
    await runner.tick(11_000);
    await runner.tick(12_000);
    expect(calls.length).toBe(before);
  });

  it('without lending: request = limit in the provider\'s units (0.67 core on 2 cores → 0.335 / 0.335), a new replica too', async () => {
    const { provider, calls, reps } = recordingProvider({ two: { n: 1, cores: 2 }, one: { n: 1, cores: 1 } });
    const runner = new ClusterRunner(redis, provider, fixed([{ replicas: 2, quota: 0.67 }, { replicas: 1, quota: 0.66 }], UNITS_REASON),
      { capacity: 2, intervalMs: 1000, defaultSloMs: 500, lending: false });
    await runner.tick(10_000);
    expect(reps.get('two')!.length).toBe(2);
    const r2 = await runner.tick(11_000);
    expect(r2.view.jobs.map((j) => j.quota)).toEqual([0.67, 0.66]);
    for (const c of calls) expect(c.limit).toBeUndefined();
    expect(pairs(reps.get('two')!)).toEqual([[0.335, 0.335], [0.335, 0.335]]);
    expect(pairs(reps.get('one')!)).toEqual([[0.66, 0.66]]);
    expect([...reps.values()].flat().reduce((s, r) => s + coreQuotaOf(r), 0)).toBeCloseTo(2, 9);
  });

  it('a pod of half a core holds at most itself: no call every tick for what it cannot hold', async () => {
    const { provider, calls, reps } = recordingProvider({ small: { n: 1, cores: 0.5 } });
    const runner = new ClusterRunner(redis, provider, fixed([{ replicas: 1, quota: 0.67 }], UNITS_REASON),
      { capacity: 2, intervalMs: 1000, defaultSloMs: 500, lending: true });
    await runner.tick(10_000);
    await runner.tick(11_000);
    await runner.tick(12_000);
    expect(pairs(reps.get('small')!)).toEqual([[1, 1]]);
    expect(calls.length).toBeLessThanOrEqual(1);
  });

  it('a replica already at its quota in cores but at another provider limit gets the lent one (2 cores: 0.5)', async () => {
    const { provider, calls, reps } = recordingProvider({ two: { n: 1, cores: 2 } });
    Object.assign(reps.get('two')![0], { quota: 0.25, limit: 1 });
    const runner = new ClusterRunner(redis, provider, fixed([{ replicas: 1, quota: 0.5 }], UNITS_REASON),
      { capacity: 2, intervalMs: 1000, defaultSloMs: 500, lending: true });
    const r = await runner.tick(10_000);
    expect(r.view.jobs[0].quota).toBe(0.5);
    expect(calls).toEqual([{ fn: 'two', id: 'two-0', quota: 0.25, limit: 0.5, args: 4 }]);
  });
});
