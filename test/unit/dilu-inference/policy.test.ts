import { createPolicy } from '../../../autoscaler/inference/registry';
import type { Capability, GpuView, Observation, ScalingSpec } from '../../../autoscaler/inference/types';

/** Latency 10 ms ÷ SM share at batch 1 and the whole quota: Dilu's profiler picks s = 0.3 for a 40 ms SLO. */
const cap: Capability = {
  latencyMs: (_f, _b, s, q) => 10 / s / q,
  capability: (_f, b, s, q) => (1000 * b * s * q) / 10,
  grid: () => ({ batches: [1], smShares: [0.3, 1], quotas: [1] }),
};
const spec: ScalingSpec = { name: 'f', minScale: 1, maxScale: 2, sloLatencyMs: 40, sloPercentile: 99, maxBatchSize: 1 };
const gpu = (id: string, shares: number[], fn = 'other'): GpuView => ({
  id, slots: shares.map((s, i) => ({ smShare: s, members: [{ replicaId: `${id}-${i}`, fn, quota: 1 }] })),
});

/** One ready replica of f on c; a (occupancy 0.1) and b (0.4) hold other functions; 25 s of load far above one replica. */
function hot(): Observation {
  return {
    intervalMs: 1000, arrivals: 1000, completions: 30, rejected: 0, queueLength: 900, inFlight: 1,
    latencyMs: { p50: 500, p95: 900, p99: 990 },
    replicas: [{ id: 'r0', gpu: 'c', smShare: 0.3, quota: 1, batchSize: 1, ready: true, throughputRps: 30 }],
    cluster: { gpus: [gpu('a', [0.1]), gpu('b', [0.4]), { id: 'c', slots: [{ smShare: 0.3, members: [{ replicaId: 'r0', fn: 'f', quota: 1 }] }] }],
      canAddGpu: true },
  };
}

describe("policy 'dilu' (Dilu's profiler + lazy scaling + Algorithm 1)", () => {
  const samples = { samples: new Array(25).fill(1000) };

  it('scales out like dilu-horizontal but places by best fit (b), where dilu-horizontal takes the emptiest device (a)', () => {
    const d = createPolicy('dilu', {}, { capability: cap }).decide(spec, samples, hot(), 0).decision;
    const h = createPolicy('dilu-horizontal', {}, { capability: cap }).decide(spec, samples, hot(), 0).decision;
    expect(d.add).toEqual([{ gpu: 'b', smShare: 0.3, quota: 1, batchSize: 1 }]);
    expect(h.add).toEqual([{ gpu: 'a', smShare: 0.3, quota: 1, batchSize: 1 }]);
    expect(d.replicas).toBe(2);
    expect({ ...d, add: [], reason: '' }).toEqual({ ...h, add: [], reason: '' });
  });

  it('takes its placement bounds as parameters: with γ = 1.25 b is full (limits 0.8 + 0.6) and c wins', () => {
    const d = createPolicy('dilu', { gamma: 1.25 }, { capability: cap }).decide(spec, samples, hot(), 0).decision;
    expect(d.add[0].gpu).toBe('c');
    expect(() => createPolicy('dilu', { gama: 1 }, { capability: cap })).toThrow(/unknown parameter/);
  });

  it('scales in without placing anything, as dilu-horizontal does', () => {
    const o = hot();
    o.replicas.push({ id: 'r1', gpu: 'b', smShare: 0.3, quota: 1, batchSize: 1, ready: true, throughputRps: 0 });
    const cold = { samples: new Array(35).fill(1) };
    const d = createPolicy('dilu', {}, { capability: cap }).decide(spec, cold, o, 0).decision;
    const h = createPolicy('dilu-horizontal', {}, { capability: cap }).decide(spec, cold, o, 0).decision;
    expect(d.remove).toHaveLength(1);
    expect(d).toEqual(h);
  });
});
