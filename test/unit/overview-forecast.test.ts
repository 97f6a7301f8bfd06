/**
 * Issue 26: /system/overview's per-function `forecast` (the live autoscaler's latest), `batchMean`
 * (answers carrying X-Batch-Size over batch executions in the window) and each replica's
 * `cpuset` / `gpu` from the autoscaler's placement book. Pure: buildOverview with numbers in it.
 */
import { batchMeanOf, buildOverview, deviceFields, FunctionInputs } from '../../gateway/routes/overview-model';
import { parseLimit } from '../../gateway/routes/overview';
import { LATENCY_BUCKETS_MS } from '../../gateway/metrics/latency-buckets';
import type { SecondCounters } from '../../gateway/metrics/second-window';
import type { ReplicaInfo } from '../../gateway/registry/registry';

const sec = (arrivals: number, batch?: { batched: number; batchExecs: number }): SecondCounters => ({
  arrivals, completions: arrivals, errors: 0, rejected: 0, dropped: 0, latencySumMs: 0, buckets: LATENCY_BUCKETS_MS.map(() => 0), queue: 0,
  inflight: 0, perReplica: {}, ...(batch ?? {}),
});

const replica = (id: string): ReplicaInfo => ({
  id, url: 'http://127.0.0.1:1', state: 'ready', agent: 'a', startedAt: '2026-11-27T10:00:00.000Z', restarts: 0, weight: 1, quota: 1,
});

const fn = (over: Partial<FunctionInputs> = {}): FunctionInputs => ({
  record: {
    kind: 'inference', createdAt: '2026-11-27T09:00:00.000Z',
    spec: { service: 'f', namespace: 'openfaas-fn', image: 'f:1', envVars: {}, labels: {}, annotations: {},
      ml: { minScale: 1, maxScale: 4, scaleToZero: false, sloPercentile: 99 } },
  },
  desired: 3,
  replicas: [replica('r1'), replica('r2'), replica('r3')],
  seconds: [],
  ...over,
});

const now = new Date('2026-11-27T10:00:05.000Z');
const one = (f: FunctionInputs) => buildOverview({ now, windowSeconds: 5, jobs: [], functions: [f] }).functions[0];

describe('overview: forecast', () => {
  it('is the latest stored point, with its band and what was observed', () => {
    const f = one(fn({ forecast: { at: '2026-11-27T10:00:04.000Z', rps: 14.2, lo: 6.1, hi: 13.9, mean: 10, observed: 11, label: 'kalman q0.9' } }));
    expect(f.forecast).toEqual({ at: '2026-11-27T10:00:04.000Z', rps: 14.2, lo: 6.1, hi: 13.9, mean: 10, observed: 11, label: 'kalman q0.9' });
  });
  it('is absent when the autoscaler stored none (a policy without a forecaster, or no decision yet)', () => {
    expect(one(fn())).not.toHaveProperty('forecast');
  });
});

describe('overview: batchMean', () => {
  it.each([
    { name: 'batches of 4 and 2: 12 answers in 4 executions', seconds: [sec(8, { batched: 8, batchExecs: 2 }), sec(4, { batched: 4, batchExecs: 2 })],
      want: 3 },
    { name: 'every request alone', seconds: [sec(5, { batched: 5, batchExecs: 5 })], want: 1 },
    { name: 'seconds without batched answers do not count', seconds: [sec(3), sec(4, { batched: 4, batchExecs: 1 })], want: 4 },
  ])('$name → $want', ({ seconds, want }) => {
    expect(one(fn({ seconds })).batchMean).toBe(want);
    expect(batchMeanOf(seconds)).toBe(want);
  });
  it('is absent without any answer carrying X-Batch-Size (a classic function), never 0 or NaN', () => {
    expect(one(fn({ seconds: [sec(10), sec(3)] }))).not.toHaveProperty('batchMean');
    expect(batchMeanOf([sec(1, { batched: 0, batchExecs: 0 })])).toBeUndefined();
  });
});

describe('overview: replica cpuset and gpu from the placement book', () => {
  it.each([
    { device: 'cpu3', want: { cpuset: '3' } },
    { device: 'GPU-8f2c', want: { gpu: 'GPU-8f2c' } },
    { device: 'new:0', want: {} },
    { device: 'cpu', want: {} },
    { device: undefined, want: {} },
  ])('$device → $want', ({ device, want }) => {
    expect(deviceFields(device)).toEqual(want);
  });
  it('fills each placed replica and leaves an unplaced one without', () => {
    const f = one(fn({ placements: { r1: { gpu: 'cpu0' }, r2: { gpu: 'GPU-1' } } }));
    expect(f.replicaList.map((r) => [r.id, r.cpuset, r.gpu])).toEqual([['r1', '0', undefined], ['r2', undefined, 'GPU-1'], ['r3', undefined, undefined]]);
    expect(f.replicaList[2]).not.toHaveProperty('cpuset');
  });
  it('a GPU replica shows the GPU the provider gave it, and no cpuset from its placement', () => {
    const f = one(fn({ replicas: [{ ...replica('g1'), gpu: 'gpu1' }], placements: { g1: { gpu: 'cpu1' } } }));
    expect(f.replicaList[0]).toMatchObject({ id: 'g1', gpu: 'gpu1' });
    expect(f.replicaList[0]).not.toHaveProperty('cpuset');
  });
});

describe('/system/forecasts ?limit=', () => {
  it('defaults to all kept and accepts 1..600', () => {
    expect(parseLimit(undefined)).toBe(600);
    expect(parseLimit('1')).toBe(1);
    expect(parseLimit('600')).toBe(600);
  });
  it.each(['0', '601', '2.5', 'x', '-3', ''])('refuses %p naming the field', (raw) => {
    expect(() => parseLimit(raw)).toThrow(/limit/);
  });
});
