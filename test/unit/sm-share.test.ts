/**
 * SM shares (issue 22 item 4), the pure parts and the live loop's side over fakes: what a GPU
 * replica is held to (`gpuEnforcement`), the agent's replacement plan, the dimensions the live
 * loop plans over (only the enforced ones, as the simulator's `restrictToEnforced`), and a planned
 * share for a new replica reaching `provider.setSmShare` as a scaling event.
 */
import type Redis from 'ioredis';
import { Actuator } from '../../autoscaler/live/actuator';
import { Collector } from '../../autoscaler/live/collector';
import { enforcedDims, plannable } from '../../autoscaler/live/enforced';
import { PlacementBook } from '../../gateway/registry/placements';
import { LiveAutoscaler } from '../../autoscaler/live/live-autoscaler';
import type { Placement } from '../../autoscaler/inference/types';
import { connectRedis } from '../../gateway/lib/redis-server';
import type { Enforcement, FunctionProvider, FunctionStatus } from '../../gateway/providers/function-provider';
import { gpuEnforcement, gpuReplicaEnv, mpsPercent } from '../../node-runtime/gpu-replica';
import { stubGpus } from '../../node-runtime/gpus';
import type { CapabilityProfile } from '../../node-runtime/profiler';
import { planShareReplacements } from '../../gateway/providers/local/share-replacement';
import { parseDeployment } from '../../gateway/registry/function-spec';
import { ScalingEvents } from '../../gateway/registry/scaling-events';
import { testRedis } from '../helpers/platform';

const node = { source: 'stub' as const, gpus: stubGpus(1) };
const cpu: Omit<Enforcement, 'summary'> = { spatial: 'cpuset', temporal: 'cfs', memory: 'cgroup' };
const withGpu = (smShare: 'mps' | 'none', timeQuota: 'limiter' | 'none'): Enforcement =>
  ({ ...cpu, gpu: { smShare, timeQuota, memory: 'none', summary: '' }, summary: '' });

describe('what a GPU replica is held to', () => {
  test.each([
    { name: 'limiter, tokend and MPS', setup: { limiter: '/l.so', tokendSocket: '/t.sock', mpsPipeDir: '/p', gpuUid: 199999 },
      want: { smShare: 'mps', timeQuota: 'limiter' }, says: /SM share by MPS, fixed at start.*uid 199999/ },
    { name: 'no MPS control program', setup: { limiter: '/l.so', tokendSocket: '/t.sock', mpsWhy: 'no nvidia-cuda-mps-control on PATH' },
      want: { smShare: 'none', timeQuota: 'limiter' }, says: /SM share NOT enforced \(MPS not available: no nvidia-cuda-mps-control on PATH\)/ },
    { name: 'no tokend', setup: { limiter: '/l.so', mpsPipeDir: '/p' }, want: { smShare: 'mps', timeQuota: 'none' },
      says: /time quota NOT enforced \(no tokend\)/ },
  ])('$name', ({ setup, want, says }) => {
    const e = gpuEnforcement({ node, ...setup });
    expect(e).toEqual(expect.objectContaining({ ...want, memory: 'none' }));
    expect(e.summary).toMatch(says);
    expect(e.summary).toMatch(/device memory not capped/);
  });

  test("a replica's share: given, else the function's, as MPS's percentage; none without MPS", () => {
    const spec = parseDeployment({ service: 'f', image: 'i', annotations: { 'mlfaas.gpu': '1', 'mlfaas.gpu.sm_share': '0.5' } });
    const env = (smShare?: number, mpsPipeDir?: string) => gpuReplicaEnv({ gpu: node.gpus[0], setup: { node, mpsPipeDir }, spec, sandboxed: true, smShare });
    expect(env(undefined, '/p').env.CUDA_MPS_ACTIVE_THREAD_PERCENTAGE).toBe('50');
    expect(env(undefined, '/p').smShare).toBe(0.5);
    expect(env(0.253, '/p').env.CUDA_MPS_ACTIVE_THREAD_PERCENTAGE).toBe('25');
    expect(env(0.253, '/p').smShare).toBe(0.25); // the share it runs at is the percentage MPS got
    expect(env(0.25).env).not.toHaveProperty('CUDA_MPS_ACTIVE_THREAD_PERCENTAGE');
    expect(env(0.25).smShare).toBeUndefined();
    expect([0.001, 0.5, 1].map(mpsPercent)).toEqual([1, 50, 100]);
  });
});

describe("the agent's replacement plan", () => {
  const r = (id: string, smShare?: number, state = 'ready' as const, current = true) => ({ id, state, smShare, current });
  test.each([
    { name: 'no wanted share: nothing', running: [r('a', 1)], wanted: {}, inFlight: [], want: { start: [], swap: [], cancel: [] } },
    { name: 'the same share (as a percentage): nothing', running: [r('a', 0.5)], wanted: { a: 0.503 }, inFlight: [],
      want: { start: [], swap: [], cancel: [] } },
    { name: 'another share: a replacement at it', running: [r('a', 1)], wanted: { a: 0.25 }, inFlight: [],
      want: { start: [{ replaces: 'a', smShare: 0.25 }], swap: [], cancel: [] } },
    { name: 'share not enforced: never replaced', running: [r('a')], wanted: { a: 0.25 }, inFlight: [], want: { start: [], swap: [], cancel: [] } },
    { name: 'an old version is left to the rollout', running: [r('a', 1, 'ready', false)], wanted: { a: 0.25 }, inFlight: [],
      want: { start: [], swap: [], cancel: [] } },
    { name: 'replacement still starting: wait', running: [r('a', 1)], wanted: { a: 0.25 },
      inFlight: [{ id: 'b', replaces: 'a', state: 'starting' as const, smShare: 0.25 }], want: { start: [], swap: [], cancel: [] } },
    { name: 'replacement ready: swap, the old one retires', running: [r('a', 1)], wanted: { a: 0.25 },
      inFlight: [{ id: 'b', replaces: 'a', state: 'ready' as const, smShare: 0.25 }],
      want: { start: [], swap: [{ replacement: 'b', retire: 'a' }], cancel: [] } },
    { name: 'wanted back at its own share: cancel', running: [r('a', 1)], wanted: { a: 1 },
      inFlight: [{ id: 'b', replaces: 'a', state: 'starting' as const, smShare: 0.25 }], want: { start: [], swap: [], cancel: ['b'] } },
    { name: 'wanted at a third share: cancel (the next step starts it)', running: [r('a', 1)], wanted: { a: 0.5 },
      inFlight: [{ id: 'b', replaces: 'a', state: 'ready' as const, smShare: 0.25 }], want: { start: [], swap: [], cancel: ['b'] } },
    { name: 'its replica went (scaled down): cancel', running: [], wanted: { a: 0.25 },
      inFlight: [{ id: 'b', replaces: 'a', state: 'starting' as const, smShare: 0.25 }], want: { start: [], swap: [], cancel: ['b'] } },
  ])('$name', ({ running, wanted, inFlight, want }) => {
    expect(planShareReplacements(running, wanted, inFlight)).toEqual(want);
  });
});

describe('the live loop plans only over what is enforced', () => {
  test.each([
    { name: 'GPU with MPS and the limiter', e: withGpu('mps', 'limiter'), device: 'gpu' as const, want: { spatial: true, temporal: true } },
    { name: 'GPU without MPS: time quota only', e: withGpu('none', 'limiter'), device: 'gpu' as const, want: { spatial: false, temporal: true } },
    { name: 'GPU with nothing', e: withGpu('none', 'none'), device: 'gpu' as const, want: { spatial: false, temporal: false } },
    { name: 'GPU replicas on a provider that declares none', e: { ...cpu, summary: '' }, device: 'gpu' as const, want: { spatial: false, temporal: false } },
    { name: 'CPU with cpuset and CFS', e: withGpu('mps', 'limiter'), device: 'cpu' as const, want: { spatial: true, temporal: true } },
    { name: 'CPU with nothing', e: { spatial: 'none', temporal: 'none', memory: 'none', summary: '' } as Enforcement, device: 'cpu' as const,
      want: { spatial: false, temporal: false } },
  ])('$name', ({ e, device, want }) => {
    expect(enforcedDims(e, device)).toEqual(want);
  });

  const grid = [1, 0.5].flatMap((smShare) => [1, 0.5].map((quota) => ({ batch: 1, smShare, quota, latencyMs: 10 / (smShare * quota) })));
  test('an unenforced dimension is pinned at 1; no point there: why', () => {
    expect(plannable(grid, { spatial: false, temporal: true })).toEqual({ points: grid.filter((p) => p.smShare === 1) });
    expect(plannable(grid, { spatial: true, temporal: true })).toEqual({ points: grid });
    expect(plannable(grid.filter((p) => p.smShare < 1), { spatial: false, temporal: true }))
      .toEqual({ why: expect.stringMatching(/only temporal is enforced/) });
  });

  describe('over a fake provider and a real Redis', () => {
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

    const status = (name: string): FunctionStatus =>
      ({ name, namespace: 'openfaas-fn', image: 'x', labels: { 'com.openfaas.scale.min': '1', 'com.openfaas.scale.max': '3' },
        annotations: { 'mlfaas.batch.max': '1', 'mlfaas.gpu': '1' }, replicas: 1, availableReplicas: 1, createdAt: '', kind: 'inference' });
    const profile: CapabilityProfile = { function: 'g.openfaas-fn', version: 'v1', measuredAt: '', device: 'gpu',
      points: grid.map((p) => ({ ...p, throughput: 1000 / p.latencyMs })) };
    const fake = (name: string, e: Enforcement, calls: string[], smShare?: number) =>
      ({
        enforcement: () => e,
        list: async () => [status(name)],
        endpoints: async () =>
          [{ id: `${name}-1`, url: 'http://127.0.0.1:1', state: 'ready', agent: 'a', startedAt: '', restarts: 0, weight: 1, quota: 1,
            ...(smShare !== undefined ? { smShare } : {}) }],
        capability: async () => profile,
        setQuota: async (_r: unknown, id: string, q: number) => void calls.push(`quota ${id} ${q}`),
        setSmShare: async (_r: unknown, id: string, s: number) => void calls.push(`sm-share ${id} ${s}`),
        scale: async (_r: unknown, n: number) => void calls.push(`scale ${n}`),
        setWeight: async () => undefined,
      }) as unknown as FunctionProvider;

    test.each([
      { name: 'g-mps', e: withGpu('mps', 'limiter'), want: 'spatial+temporal' },
      { name: 'g-nomps', e: withGpu('none', 'limiter'), want: 'temporal' },
    ])('a GPU function on a node with $want enforced is planned over $want', async ({ name, e, want }) => {
      const a = new LiveAutoscaler(client, fake(name, e, []),
        { policy: 'hybrid', params: { cooldownS: 0 }, intervalMs: 1000, defaultSloMs: 1000, devices: ['cpu0'] });
      const [r] = await a.tick(2_000_000);
      expect(r.planned).toBe(want);
    });

    test('a planned share for a new replica at another share reaches setSmShare, as a scaling event', async () => {
      const calls: string[] = [];
      const ref = { name: 'g-new', namespace: 'openfaas-fn' };
      const provider = fake('g-new', withGpu('mps', 'limiter'), calls, 1);
      const pending = new Map<string, Placement[]>([['g-new.openfaas-fn', [{ gpu: 'cpu0', smShare: 0.5, quota: 0.5, batchSize: 1 }]]]);
      const { items } = await new Collector(client, provider, ['cpu0'], pending).collect(Date.now());
      expect(items[0].shares).toEqual([{ replicaId: 'g-new-1', smShare: 0.5 }]);
      expect(items[0].replicas[0].smShare).toBe(1); // modelled at the share it runs at until replaced
      // and booked at it: MPS cannot change a running replica's share (the next tick reads the book)
      expect((await new PlacementBook(client).read(ref))['g-new-1']).toEqual(expect.objectContaining({ gpu: 'cpu0', smShare: 1 }));
      const out = await new Actuator(provider, new ScalingEvents(client), 'hybrid').initial(ref, items[0].replicas, items[0].initial, Date.now(),
        items[0].shares);
      expect(calls).toEqual(['sm-share g-new-1 0.5', 'quota g-new-1 0.5']);
      expect(out).toEqual([{ action: 'sm-share', replica: 'g-new-1', to: 0.5, ok: true }]);
      const [ev] = await new ScalingEvents(client).list(ref, 1);
      expect(ev).toEqual(expect.objectContaining({ action: 'sm-share', from: 1, to: 0.5, reason: expect.stringMatching(/replacement/) }));
      // a replica whose share is not enforced (none reported) is never asked to change it
      const plain = fake('g-plain', withGpu('none', 'limiter'), calls);
      const p2 = new Map<string, Placement[]>([['g-plain.openfaas-fn', [{ gpu: 'cpu0', smShare: 0.5, quota: 1, batchSize: 1 }]]]);
      expect((await new Collector(client, plain, ['cpu0'], p2).collect(Date.now())).items[0].shares).toEqual([]);
    });
  });
});
