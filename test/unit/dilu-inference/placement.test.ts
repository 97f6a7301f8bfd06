import { ClusterOverlay } from '../../../autoscaler/inference/cluster';
import { placeFixed, type ReplicaConfig } from '../../../autoscaler/inference/decision-helpers';
import { bookedLoad, DILU_PLACEMENT_DEFAULTS, placeDilu } from '../../../autoscaler/inference/placement-dilu';
import type { ClusterView, GpuView } from '../../../autoscaler/inference/types';
import { DeviceLedger } from '../../../autoscaler/sim/devices';

/** A device whose replicas each run at SM share s with the whole time quota (Dilu's replicas). */
const gpu = (id: string, shares: number[], fn = 'other'): GpuView => ({
  id, slots: shares.map((s, i) => ({ smShare: s, members: [{ replicaId: `${id}-${i}`, fn, quota: 1 }] })),
});
const cfg = (smShare: number): ReplicaConfig => ({ exclusive: false, smShare, quota: 1, batchSize: 4 });
const view = (gpus: GpuView[], canAddGpu = true): ClusterView => ({ gpus, canAddGpu });

describe("Dilu's Algorithm 1 in the inference simulator's placement", () => {
  it('books request = s·q, limit = min(1, 2·request) and memory per replica', () => {
    const g = bookedLoad(gpu('a', [0.2, 0.6]), 0, DILU_PLACEMENT_DEFAULTS, () => 2);
    expect(g.smReq).toBeCloseTo(0.8);
    expect(g.smLim).toBeCloseTo(0.4 + 1);
    expect(g.mem).toBe(4);
  });

  it('best fit: the fuller feasible device, where our lowest-occupancy placement takes the emptier one', () => {
    const v = view([gpu('a', [0.2]), gpu('b', [0.25, 0.25])]);
    expect(placeDilu(new ClusterOverlay(v), 'f', cfg(0.2), 1)[0].gpu).toBe('b');
    expect(placeFixed(new ClusterOverlay(v), 'f', cfg(0.2), 1)[0].gpu).toBe('a');
  });

  it('γ = 1.5 bounds Σlimit: a device with SM room but limits booked to 1.2 takes no limit of 0.4', () => {
    const v = view([gpu('a', [0.3, 0.3])]);
    const p = placeDilu(new ClusterOverlay(v), 'f', cfg(0.2), 1);
    expect(p[0].gpu).toMatch(/^new:/);
    // γ = 2 lets it in (Σrequest 0.8 ≤ Ω)
    expect(placeDilu(new ClusterOverlay(v), 'f', cfg(0.2), 1, { ...DILU_PLACEMENT_DEFAULTS, gamma: 2 })[0].gpu).toBe('a');
  });

  it('Ω = 1 bounds Σrequest', () => {
    const v = view([gpu('a', [0.9])]);
    const loose = { ...DILU_PLACEMENT_DEFAULTS, gamma: 3 };
    expect(placeDilu(new ClusterOverlay(v), 'f', cfg(0.1), 1, loose)[0].gpu).toBe('a');
    expect(placeDilu(new ClusterOverlay(v), 'f', cfg(0.2), 1, loose)[0].gpu).toMatch(/^new:/);
  });

  it('memory bounds a device at memGb', () => {
    const v = view([gpu('a', [0.1], 'big')]);
    const mem = (fn: string) => (fn === 'big' ? 30 : 5);
    expect(placeDilu(new ClusterOverlay(v), 'f', cfg(0.1), 1, DILU_PLACEMENT_DEFAULTS, mem)[0].gpu).toBe('a');
    expect(placeDilu(new ClusterOverlay(v), 'big', cfg(0.1), 1, DILU_PLACEMENT_DEFAULTS, mem)[0].gpu).toMatch(/^new:/);
  });

  it('each replica sees the ones placed before it, and a full cluster that may not grow places none', () => {
    const adds = placeDilu(new ClusterOverlay(view([])), 'f', cfg(0.3), 4);
    // two per device: a third would book Σlimit 0.6·3 = 1.8 > γ
    expect(adds.map((a) => a.gpu)).toEqual(['new:0', 'new:0', 'new:1', 'new:1']);
    expect(placeDilu(new ClusterOverlay(view([gpu('a', [0.5])], false)), 'f', cfg(0.6), 2)).toEqual([]);
  });

  it("the ledger's peak counts the most devices held at once before the trace's end", () => {
    const l = new DeviceLedger<{ gpu: string; smShare: number; quota: number; busy: boolean }>(100);
    const r = (g: string) => ({ gpu: g, smShare: 1, quota: 1, busy: false });
    const a = r('a');
    l.place(a, 0);
    l.place(r('b'), 1);
    l.unplace(a, 2);
    l.place(r('c'), 3);
    expect(l.peak).toBe(2);
    l.place(r('d'), 150);
    expect(l.peak).toBe(2);
  });
});
