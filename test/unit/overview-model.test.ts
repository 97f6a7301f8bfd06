import { bucketQuantile, buildOverview, FunctionInputs } from '../../gateway/routes/overview-model';
import { parseWindow, recordOf } from '../../gateway/routes/overview';
import type { FunctionStatus } from '../../gateway/providers/function-provider';
import { LATENCY_BUCKETS_MS } from '../../gateway/metrics/latency-buckets';
import type { SecondCounters } from '../../gateway/metrics/second-window';
import type { JobRecord } from '../../gateway/jobs/job-record';
import type { ReplicaInfo } from '../../gateway/registry/registry';

const sec = (arrivals: number, errors: number, latencies: Record<number, number>): SecondCounters => ({
  arrivals,
  completions: arrivals,
  errors,
  rejected: 0,
  dropped: 0,
  latencySumMs: 0,
  buckets: LATENCY_BUCKETS_MS.map((_, i) => latencies[i] ?? 0),
  queue: 0,
  inflight: 0,
  perReplica: {},
});

const replica = (id: string, state: ReplicaInfo['state'], extra: Partial<ReplicaInfo> = {}): ReplicaInfo => ({
  id, url: 'http://127.0.0.1:1', state, agent: 'a', startedAt: '2026-11-27T10:00:00.000Z', restarts: 0, weight: 1, quota: 0.5, ...extra,
});

const fn = (name: string, over: Partial<FunctionInputs> = {}): FunctionInputs => ({
  record: {
    kind: 'inference',
    createdAt: '2026-11-27T09:00:00.000Z',
    spec: {
      service: name, namespace: 'openfaas-fn', image: `${name}:latest`, envVars: {}, labels: {}, annotations: {}, limits: { cpu: '500m' },
      ml: { minScale: 0, maxScale: 4, scaleToZero: true, sloLatencyMs: 50, sloPercentile: 99 },
    },
  },
  desired: 2,
  replicas: [replica('r1', 'ready', { smShare: 0.25, limit: 0.75 } as Partial<ReplicaInfo>), replica('r2', 'starting')],
  routed: { queue: 3, inflight: 1 },
  seconds: [],
  ...over,
});

const job = (id: string, over: Partial<JobRecord> = {}): JobRecord => ({
  id, function: 'mnist-train', namespace: 'openfaas-fn', model: 'm', epochs: 1, iterations: 200, batchSize: 32, learningRate: 0.1, maxWorkers: 2,
  submittedAt: '2026-11-27T10:00:00.000Z', state: 'running', workers: 2, plannedRounds: [2], allocations: [], reasons: [], checkpointDir: '/x',
  trainExamples: 1000, curve: { gpus: [1], iterPerSec: [1] }, ...over,
});

describe('bucketQuantile', () => {
  it('is undefined for an empty histogram', () => {
    expect(bucketQuantile(LATENCY_BUCKETS_MS.map(() => 0), 0.5)).toBeUndefined();
  });
  it('interpolates inside the bucket holding the rank', () => {
    const b = LATENCY_BUCKETS_MS.map(() => 0);
    b[3] = 100; // (5, 10] ms
    expect(bucketQuantile(b, 0.5)).toBeCloseTo(7.5);
    expect(bucketQuantile(b, 0.99)).toBeCloseTo(9.95);
  });
  it('answers the lower bound of the open last bucket, not Infinity', () => {
    const b = LATENCY_BUCKETS_MS.map(() => 0);
    b[b.length - 1] = 5;
    expect(bucketQuantile(b, 0.99)).toBe(10000);
  });
});

describe('buildOverview', () => {
  const now = new Date('2026-11-27T10:00:05.000Z');
  it('reports replicas, routing state, rates, quantiles and the SLO of a function', () => {
    const o = buildOverview({ now, windowSeconds: 5, jobs: [], functions: [fn('b', { seconds: [sec(10, 1, { 3: 10 }), sec(15, 0, { 3: 5, 11: 10 })] })] });
    expect(o.at).toBe('2026-11-27T10:00:05.000Z');
    const f = o.functions[0];
    expect(f).toMatchObject({
      name: 'b', namespace: 'openfaas-fn', kind: 'inference', image: 'b:latest', replicas: { ready: 1, desired: 2, min: 0, max: 4 },
      scaleToZero: true, queueLength: 3, inflight: 1, rps: 5, errorsPerS: 0.2, sloMs: 50, sloPercentile: 99,
    });
    // 25 completions: 15 in (5,10], 10 in (75,100]: p50 in the first bucket, p99 in the second
    expect(f.p50Ms).toBeGreaterThan(5);
    expect(f.p50Ms).toBeLessThanOrEqual(10);
    expect(f.p99Ms).toBeGreaterThan(75);
    expect(f.p99Ms).toBeLessThanOrEqual(100);
    expect(f.replicaList).toEqual([
      { id: 'r1', state: 'ready', cpuQuota: 0.5, cpuLimit: 0.75, smShare: 0.25, startedAt: '2026-11-27T10:00:00.000Z' },
      { id: 'r2', state: 'starting', cpuQuota: 0.5, startedAt: '2026-11-27T10:00:00.000Z' },
    ]);
  });
  it('omits what has no source instead of faking it', () => {
    const base = fn('a', { routed: undefined });
    base.record.spec.ml = { minScale: 1, maxScale: 20, scaleToZero: false, sloPercentile: 99 };
    base.record.spec.limits = undefined;
    const f = buildOverview({ now, windowSeconds: 5, jobs: [], functions: [base] }).functions[0];
    expect(f.queueLength).toBe(0);
    expect(f.rps).toBe(0);
    for (const k of ['p50Ms', 'p99Ms', 'sloMs', 'sloPercentile', 'batchMean', 'idleToZero']) expect(f).not.toHaveProperty(k);
    expect(f.replicaList[1]).not.toHaveProperty('cpuLimit');
    expect(f.replicaList[1]).not.toHaveProperty('smShare');
  });
  it('reports idleToZero only for min_scale 0 with a declared zero-duration', () => {
    const declared = fn('a');
    declared.record.spec.annotations = { 'com.openfaas.scale.zero-duration': '90s' };
    const pinned = fn('b');
    pinned.record.spec.labels = { 'com.openfaas.scale.zero-duration': '2m' };
    pinned.record.spec.ml = { ...pinned.record.spec.ml, minScale: 1 };
    const [a, b, c] = buildOverview({ now, windowSeconds: 5, jobs: [], functions: [declared, pinned, fn('c')] }).functions;
    expect(a.idleToZero).toBe(90);
    expect(b).not.toHaveProperty('idleToZero');
    expect(c).not.toHaveProperty('idleToZero');
  });
  it('sorts functions by namespace and name, jobs newest first', () => {
    const o = buildOverview({
      now, windowSeconds: 1, functions: [fn('z'), fn('a')],
      jobs: [job('j1', { submittedAt: '2026-11-27T09:00:00.000Z' }), job('j2')],
    });
    expect(o.functions.map((f) => f.name)).toEqual(['a', 'z']);
    expect(o.jobs.map((j) => j.id)).toEqual(['j2', 'j1']);
  });
  it('reports job progress in 0..1, deadline and goodput only when known', () => {
    const o = buildOverview({
      now, windowSeconds: 5, functions: [],
      jobs: [
        job('half', {
          progress: { epoch: 0, epochs: 1, step: 100, samples: 3200, examplesPerSec: 200, statEfficiency: 0.5 },
          deadline: '2026-11-27T11:00:00.000Z',
        }),
        job('over', { progress: { epoch: 1, epochs: 1, step: 900, samples: 1 } }),
        job('done', { state: 'completed', submittedAt: '2026-11-27T08:00:00.000Z' }),
      ],
    });
    const by = Object.fromEntries(o.jobs.map((j) => [j.id, j]));
    expect(by.half).toEqual({
      id: 'half', function: 'mnist-train', state: 'running', progress: 0.5, workers: 2, deadline: '2026-11-27T11:00:00.000Z', goodput: 100,
    });
    expect(by.over.progress).toBe(1);
    expect(by.over).not.toHaveProperty('goodput');
    expect(by.done.progress).toBe(1);
  });
});

describe('parseWindow', () => {
  it('defaults to 5 and accepts 1..60', () => {
    expect(parseWindow(undefined)).toBe(5);
    expect(parseWindow('60')).toBe(60);
  });
  it.each(['0', '61', '1.5', 'x', '-1', ''])('refuses %p naming the field', (raw) => {
    expect(() => parseWindow(raw)).toThrow(/window/);
  });
});

describe('recordOf (a listed function as the model reads it)', () => {
  const status = (labels: Record<string, string>, kind = 'inference'): FunctionStatus => ({
    name: 'f', image: 'f:1', namespace: 'ns', labels, annotations: { 'mlfaas.slo.latency_ms': '40' }, replicas: 1, availableReplicas: 1,
    createdAt: '2026-11-27T09:00:00.000Z', kind, limits: { cpu: '2' },
  });
  it('parses the ML fields from labels and annotations', () => {
    const r = recordOf(status({ 'com.openfaas.scale.min': '0', 'com.openfaas.scale.max': '3' }, 'classic'));
    expect(r.kind).toBe('classic');
    expect(r.spec.ml).toMatchObject({ minScale: 0, maxScale: 3, scaleToZero: true, sloLatencyMs: 40 });
    expect(r.spec.limits).toEqual({ cpu: '2' });
  });
  it('reads a value that no longer parses as the defaults instead of failing the snapshot', () => {
    expect(recordOf(status({ 'com.openfaas.scale.min': 'many' })).spec.ml).toMatchObject({ minScale: 1, maxScale: 20, scaleToZero: false });
  });
});
