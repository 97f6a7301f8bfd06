/**
 * The live loop end to end over a fake provider and a real Redis: what the collector reads, the
 * decider's holds, and the actuator's record of failed calls (issue 10 items 1 and 2).
 */
import type Redis from 'ioredis';
import { LiveAutoscaler, TickReport } from '../../../autoscaler/live/live-autoscaler';
import type { FunctionProvider, FunctionStatus } from '../../../gateway/providers/function-provider';
import type { CapabilityProfile } from '../../../node-runtime/profiler';
import { connectRedis } from '../../../gateway/lib/redis-server';
import { ScalingEvents } from '../../../gateway/registry/scaling-events';
import { testRedis } from '../../helpers/platform';

const ref = { name: 'f', namespace: 'openfaas-fn' };

function profile(version: string, ms: number): CapabilityProfile {
  return { function: 'f.openfaas-fn', version, measuredAt: new Date().toISOString(), device: 'cpu',
    points: [1, 0.5, 0.25].map((quota) => ({ batch: 1, quota, smShare: 1, throughput: (1000 * quota) / ms, latencyMs: ms / quota })) };
}

/** One inference function with one ready replica at quota 1; setQuota fails like a vanished replica's. */
function fakeProvider(state: { profile?: CapabilityProfile; calls: string[] }): FunctionProvider {
  const status: FunctionStatus = { name: 'f', namespace: 'openfaas-fn', image: 'x', labels: { 'com.openfaas.scale.min': '1', 'com.openfaas.scale.max': '3' },
    annotations: { 'mlfaas.batch.max': '1' }, replicas: 1, availableReplicas: 1, createdAt: '', kind: 'inference' };
  return {
    enforcement: () => ({ spatial: 'cpuset', temporal: 'cfs', memory: 'cgroup', summary: 'kernel-enforced' }),
    list: async () => [status],
    get: async () => status,
    endpoints: async () => [{ id: 'r1', url: 'http://127.0.0.1:1', state: 'ready', agent: 'a', startedAt: '', restarts: 0, weight: 1, quota: 1 }],
    capability: async () => state.profile,
    setQuota: async (_r: unknown, id: string, q: number) => {
      state.calls.push(`quota ${id} ${q}`);
      throw new Error(`replica ${id} of f.openfaas-fn not found`);
    },
    scale: async (_r: unknown, n: number) => void state.calls.push(`scale ${n}`),
    setWeight: async () => undefined,
  } as unknown as FunctionProvider;
}

describe('live loop over a fake provider', () => {
  let redis: Awaited<ReturnType<typeof testRedis>>;
  let client: Redis;
  beforeAll(async () => {
    redis = await testRedis();
    client = connectRedis(redis.url);
  });
  afterAll(async () => {
    client.disconnect();
    await redis.stop();
  });

  it('holds without a profile, keeps the previous version while re-profiling, records a failed setQuota as failed', async () => {
    const st: { profile?: CapabilityProfile; calls: string[] } = { calls: [] };
    const a = new LiveAutoscaler(client, fakeProvider(st), { policy: 'hybrid', params: { cooldownS: 0 }, intervalMs: 1000, defaultSloMs: 1000,
      devices: ['cpu0', 'cpu1'] });
    const one = async (t: number): Promise<TickReport> => (await a.tick(t))[0];

    expect((await one(1_000_000)).skipped).toBe('hold: no capability profile yet');
    expect(st.calls).toEqual([]);

    // v1: 2 ms a request, idle: the policy steps the idle replica's quota down; the call fails
    st.profile = profile('v1', 2);
    const r = await one(1_001_000);
    expect(r.decision).toBeDefined();
    expect(st.calls.some((c) => c.startsWith('quota r1'))).toBe(true);
    const failed = r.outcomes!.find((o) => o.action === 'quota')!;
    expect(failed.ok).toBe(false);
    const [ev] = await new ScalingEvents(client).list(ref, 1);
    expect(ev.action).toBe('quota');
    expect(ev.error).toMatch(/replica r1 of f.openfaas-fn not found/);

    // a redeploy: the agent has no profile for the new version yet; the loop keeps deciding on v1
    st.profile = undefined;
    const during = await one(1_002_000);
    expect(during.skipped).toBeUndefined();
    expect(during.decision!.reason).toMatch(/^hybrid: /);
    expect(during.decision!.reason).not.toMatch(/C=0\.0 /);
  });
});
