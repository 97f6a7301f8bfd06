/**
 * <request, limit> CPU quotas (issue 24, Dilu): the request becomes the group's CFS weight
 * (cpu.shares ∝ request, as Kubernetes' requests.cpu), the limit its CFS quota; the replicas'
 * parent weighs the node's cores; tokend's CPU gate gets both; the actuator derives the limit
 * from the profiled ratio. Checked on a fake cgroup root (files only; the live kernel behaviour
 * is `test/integration/request-limit.timing.test.ts`).
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Actuator, limitForQuota } from '../../../autoscaler/live/actuator';
import type { PlacedReplica } from '../../../autoscaler/live/observation';
import type { CapabilityProfile } from '../../../gateway/providers/capability-profile';
import type { FunctionProvider } from '../../../gateway/providers/function-provider';
import type { ScalingEvents } from '../../../gateway/registry/scaling-events';
import { Cgroups } from '../../../node-runtime/cgroups';
import { cgroupCpuEnforcer, limitOfAllotment, tokendCpuEnforcer } from '../../../node-runtime/cpu-enforcer';
import { CFS_PERIOD_US, cpuShares, cpuWeightFile, cpuWeightOfShares } from '../../../node-runtime/cpu-values';
import { gpuQuotaPusher } from '../../../node-runtime/gpu-node';

describe('request → CFS weight', () => {
  test('1024 shares per core requested, at least 2; v2 weight by the Kubernetes mapping', () => {
    expect(cpuShares(0.3, 1)).toBe(307);
    expect(cpuShares(1, 2)).toBe(2048);
    expect(cpuShares(0.001, 1)).toBe(2);
    expect(() => cpuShares(0, 1)).toThrow();
    expect(() => cpuShares(1.5, 1)).toThrow();
    expect(cpuWeightOfShares(2)).toBe(1);
    expect(cpuWeightOfShares(1024)).toBe(39);
    expect(cpuWeightOfShares(262144)).toBe(10000);
    expect(cpuWeightFile(1, 307)).toEqual({ file: 'cpu.shares', value: '307' });
    expect(cpuWeightFile(2, 1024)).toEqual({ file: 'cpu.weight', value: '39' });
  });

  test('the limit is clamped to [quota, 1]; absent = the quota', () => {
    expect(limitOfAllotment({ quota: 0.3 })).toBe(0.3);
    expect(limitOfAllotment({ quota: 0.3, limit: 0.6 })).toBe(0.6);
    expect(limitOfAllotment({ quota: 0.3, limit: 0.1 })).toBe(0.3);
    expect(limitOfAllotment({ quota: 0.7, limit: 1.4 })).toBe(1);
  });
});

describe('cgroup enforcer applies both halves (fake root)', () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'request-limit-fake-'));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));
  const file = (...p: string[]) => readFileSync(join(root, ...p), 'utf8').trim();

  test('v1: cpu.shares ∝ request, cfs_quota_us = limit; the parent weighs the node', async () => {
    for (const h of ['cpu', 'cpuset', 'cpuacct']) mkdirSync(join(root, h));
    writeFileSync(join(root, 'cpu', 'cpu.cfs_quota_us'), '-1');
    writeFileSync(join(root, 'cpuset', 'cpuset.cpus'), '0-1');
    writeFileSync(join(root, 'cpuset', 'cpuset.mems'), '0');
    writeFileSync(join(root, 'cpuacct', 'cpuacct.usage'), '0');
    const cg = Cgroups.detect(root)!;
    expect(file('cpu', 'mlfaas', 'cpu.shares')).toBe('2048');
    cg.create('a', {});
    const e = cgroupCpuEnforcer(cg);
    await e.apply({ id: 'a', pid: 1, cores: [1], quota: 0.3, limit: 0.6 });
    expect(file('cpu', 'mlfaas', 'a', 'cpu.shares')).toBe('307');
    expect(file('cpu', 'mlfaas', 'a', 'cpu.cfs_quota_us')).toBe(String(0.6 * CFS_PERIOD_US));
    // without a limit: request = limit (today's behaviour), nothing lent
    await e.apply({ id: 'a', pid: 1, cores: [1], quota: 0.3 });
    expect(file('cpu', 'mlfaas', 'a', 'cpu.cfs_quota_us')).toBe(String(0.3 * CFS_PERIOD_US));
    // limits.cpu still caps the limit
    await e.apply({ id: 'a', pid: 1, cores: [0, 1], quota: 0.5, limit: 1, limitCores: 1.5 });
    expect(file('cpu', 'mlfaas', 'a', 'cpu.shares')).toBe('1024');
    expect(file('cpu', 'mlfaas', 'a', 'cpu.cfs_quota_us')).toBe(String(1.5 * CFS_PERIOD_US));
  });

  test('v2: cpu.weight from the request, cpu.max from the limit', async () => {
    writeFileSync(join(root, 'cgroup.controllers'), 'cpuset cpu memory pids');
    writeFileSync(join(root, 'cpuset.cpus.effective'), '0-1');
    const cg = Cgroups.detect(root)!;
    expect(file('mlfaas', 'cpu.weight')).toBe(String(cpuWeightOfShares(2048)));
    cg.create('b', {});
    await cgroupCpuEnforcer(cg).apply({ id: 'b', pid: 1, cores: [0], quota: 0.25, limit: 0.5 });
    expect(file('mlfaas', 'b', 'cpu.weight')).toBe(String(cpuWeightOfShares(256)));
    expect(file('mlfaas', 'b', 'cpu.max')).toBe(`${0.5 * CFS_PERIOD_US} ${CFS_PERIOD_US}`);
  });
});

describe('tokend gets <request, limit>', () => {
  test('the CPU gate: both as fractions of the node', async () => {
    const calls: number[][] = [];
    const e = tokendCpuEnforcer(async (pid, share, limit) => void calls.push([pid, share, limit]), 2);
    await e.apply({ id: 'x', pid: 9, cores: [0], quota: 0.3, limit: 0.6 });
    await e.apply({ id: 'x', pid: 9, cores: [0], quota: 0.3 });
    expect(calls).toEqual([[9, 0.15, 0.3], [9, 0.15, 0.15]]);
  });

  test('a GPU window: request and limit, limit at least the request', async () => {
    const got: { request: number; limit: number }[] = [];
    const push = gpuQuotaPusher({ setQuota: async (q) => (got.push(q), { monoNs: 0 }), remove: async () => ({ monoNs: 0 }) }, () => true);
    await push(11, 0, 0.3, 0.6);
    await push(11, 0, 0.3);
    await push(11, 0, 0.5, 0.2);
    expect(got.map((q) => [q.request, q.limit])).toEqual([[0.3, 0.6], [0.3, 0.3], [0.5, 0.5]]);
  });
});

describe('the actuator derives the limit from the profiled ratio', () => {
  test('limit = quota × (limit ÷ request), capped at 1; none without a ratio above 1', () => {
    expect(limitForQuota(0.3, { request: 0.2, limit: 0.4 })).toBeCloseTo(0.6);
    expect(limitForQuota(0.7, { request: 0.2, limit: 0.4 })).toBe(1);
    expect(limitForQuota(0.3, { request: 0.4, limit: 0.4 })).toBeUndefined();
    expect(limitForQuota(0.3, undefined)).toBeUndefined();
  });
});

describe('the actuator sets both halves', () => {
  const ref = { name: 'f', namespace: 'openfaas-fn' };
  const placed = (id: string, quota: number): PlacedReplica => ({ id, fn: 'f', ready: true, gpu: 'cpu0', smShare: 1, quota, batchSize: 1 });
  const events = { record: async () => undefined } as unknown as ScalingEvents;
  function provider(calls: unknown[][], profile?: Partial<CapabilityProfile>): FunctionProvider {
    return {
      setQuota: async (...a: unknown[]) => void calls.push(a.slice(1)),
      capability: async () => profile as CapabilityProfile | undefined,
    } as unknown as FunctionProvider;
  }
  const decision = { replicas: 1, quotas: [{ replicaId: 'a', quota: 0.3 }], add: [], remove: [], weights: {}, reason: 'test' };

  test('with a profiled <request, limit>: setQuota(q, q × limit / request)', async () => {
    const calls: unknown[][] = [];
    const a = new Actuator(provider(calls, { requestLimit: { request: 0.2, limit: 0.4, batch: 1, sloMs: 100 } }), events, 'hybrid');
    await a.apply(ref, 1, [placed('a', 1)], decision, 1, 0);
    await a.initial(ref, [placed('b', 1)], [{ replicaId: 'b', quota: 0.7 }], 0);
    expect(calls).toEqual([['a', 0.3, 0.6], ['b', 0.7, 1]]);
  });

  test('without one: setQuota(q), request = limit', async () => {
    const calls: unknown[][] = [];
    await new Actuator(provider(calls, { points: [] }), events, 'hybrid').apply(ref, 1, [placed('a', 1)], decision, 1, 0);
    expect(calls).toEqual([['a', 0.3]]);
  });

  test('refreshLimits: a profile that arrives later reaches replicas whose quota stays, once', async () => {
    const calls: unknown[][] = [];
    const profile: Partial<CapabilityProfile> = { points: [] };
    const a = new Actuator(provider(calls, profile), events, 'hybrid');
    const reps = [placed('a', 0.25), placed('b', 0.5)];
    expect(await a.refreshLimits(ref, reps)).toEqual([]);
    profile.requestLimit = { request: 0.2, limit: 0.4, batch: 1, sloMs: 100 };
    expect(await a.refreshLimits(ref, reps)).toEqual(['a', 'b']);
    expect(await a.refreshLimits(ref, reps)).toEqual([]);
    expect(calls).toEqual([['a', 0.25, 0.5], ['b', 0.5, 1]]);
  });
});
