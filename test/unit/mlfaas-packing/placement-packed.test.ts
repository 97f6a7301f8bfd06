import { ClusterOverlay, occupancy } from '../../../autoscaler/inference/cluster';
import { hybrid } from '../../../autoscaler/inference/hybrid';
import { bestFitOrder, consolidationOrder, forecastHeadroom, headroomOptions } from '../../../autoscaler/inference/placement-packed';
import { createPolicy, policyNames } from '../../../autoscaler/inference/registry';
import type { GpuView } from '../../../autoscaler/inference/types';
import { aFunction, cap, clusterOf, observe, replica } from '../../autoscaler/fixtures';

const dev = (id: string, smShare: number, quota: number, fn = 'other'): GpuView =>
  ({ id, slots: [{ smShare, members: [{ replicaId: `${id}-x`, fn, quota }] }] });
const packed = () => createPolicy('mlfaas-packed', {}, { capability: cap() });
const lowest = () => hybrid({}, { capability: cap() });

describe("mlfaas-packed placement (issue 24, ours against Dilu's)", () => {
  test('is registered', () => {
    expect(policyNames()).toContain('mlfaas-packed');
    expect(packed().name).toBe('mlfaas-packed');
  });

  test('best-fit order: fullest first, devices at the limit or without room left out', () => {
    const o = new ClusterOverlay({ gpus: [dev('a', 0.3, 0.2), dev('b', 0.5, 0.6), dev('c', 1, 0.97), dev('d', 0.5, 0.4)], canAddGpu: true });
    expect(bestFitOrder(o, 0.95, () => true).map((g) => g.id)).toEqual(['b', 'd', 'a']);
    expect(bestFitOrder(o, 0.95, (g) => g.id !== 'b').map((g) => g.id)).toEqual(['d', 'a']);
  });

  test('a new replica goes to the fuller device where the lowest-occupancy placement picks the emptiest', () => {
    // g1 holds 0.3·0.2 = 0.06, g2 0.5·0.6 = 0.3 with room in its 0.5 slot; the cluster cannot grow
    const r = [replica('r1', 'g0', 0.5, 0.5)];
    const cluster = clusterOf(r, [dev('g1', 0.3, 0.2), dev('g2', 0.5, 0.6)], false);
    const obs = observe(40, r, { cluster });
    const spec = aFunction().maxScale(5).build();
    const h = lowest().decide(spec, lowest().initialState(spec), obs, 1000).decision;
    const p = packed().decide(spec, packed().initialState(spec), obs, 1000).decision;
    expect(h.add.map((a) => a.gpu)).toEqual(['g1']);
    expect(p.add.map((a) => a.gpu)).toEqual(['g2']);
    // it joined g2's slot: no SMs of its own, the device's occupancy stays within the HGO limit
    expect(p.add[0].smShare).toBe(0.5);
    expect(0.3 + p.add[0].smShare * p.add[0].quota).toBeLessThanOrEqual(0.95);
  });

  test('consolidation: scale-in removes the replica alone on its device, which empties', () => {
    const reps = [replica('a', 'gA', 0.5, 0.5), replica('b', 'gB', 0.5, 0.5), replica('c', 'gC', 0.5, 0.5)];
    const cluster = clusterOf(reps, [dev('gA', 0.5, 0.5), dev('gB', 0.5, 0.4)]);
    const obs = observe(0, reps, { cluster });
    const spec = aFunction().build();
    const h = lowest().decide(spec, lowest().initialState(spec), obs, 60_000).decision;
    const p = packed().decide(spec, packed().initialState(spec), obs, 60_000).decision;
    expect(h.remove).toHaveLength(2);
    expect(p.remove).toHaveLength(2);
    // the lowest-occupancy hybrid keeps c, alone on gC: every device stays held; ours removes c first
    expect(h.remove).not.toContain('c');
    expect(p.remove).toContain('c');
    const held = (removed: string[]) => new Set(cluster.gpus.filter((g) => g.slots.some((s) => s.members.some((m) => !removed.includes(m.replicaId))))
      .map((g) => g.id));
    expect(held(h.remove).size).toBe(3);
    expect(held(p.remove).size).toBe(2);
  });

  test('consolidation order: replicas by their device occupancy, emptiest first, stable on ties', () => {
    const reps = [replica('a', 'gA', 0.5, 0.5), replica('b', 'gB', 0.5, 0.5), replica('c', 'gC', 0.5, 0.5), replica('d', 'gC', 0.5, 0.1)];
    const obs = observe(0, reps, { cluster: clusterOf(reps, [dev('gA', 0.5, 0.3)]) });
    expect(consolidationOrder(obs).replicas.map((r) => r.id)).toEqual(['b', 'c', 'd', 'a']);
    expect(obs.replicas.map((r) => r.id)).toEqual(['a', 'b', 'c', 'd']);
  });

  test('headroom: a quota that fits the device but not its growth is capped or dropped', () => {
    const g = dev('g', 0.5, 0.6); // occupancy 0.3, its 0.5 slot has quota room 0.4, 0.5 of the SMs free
    const none = headroomOptions(g, 48, [0.5], 0.1, 0, 0.95);
    expect(none).toEqual([{ smShare: 0.5, maxQuota: 0.4, join: true }, { smShare: 0.5, maxQuota: 1, join: false }]);
    // h = 1: the joining replica may grow ×2 in its slot (0.4 / 2); a new slot: ×2 within quota 1 (0.5), the device's room 0.65 / (0.5·2)
    const h1 = headroomOptions(g, 48, [0.5], 0.1, 1, 0.95);
    expect(h1[0].maxQuota).toBeCloseTo(0.2, 9);
    expect(h1[1].maxQuota).toBeCloseTo(0.5, 9);
    const h2 = headroomOptions(dev('g', 0.5, 1.0), 48, [0.5], 0.1, 1, 0.95); // occupancy 0.5: the room binds, 0.45 / (0.5·2)
    expect(h2).toEqual([{ smShare: 0.5, maxQuota: expect.closeTo(0.45, 9), join: false }]);
    for (const o of h1) expect(occupancy(g) + o.smShare * o.maxQuota * 2).toBeLessThanOrEqual(0.95 + 1e-9);
    // a nearly full device: no option survives the headroom, though one fits without it
    const full = dev('f', 1, 0.8);
    expect(headroomOptions(full, 48, [1], 0.1, 0, 0.95).length).toBe(1);
    expect(headroomOptions(full, 48, [1], 0.1, 1, 0.95)).toEqual([]);
  });

  test('headroom from the forecast: its growth over the observed rate, capped', () => {
    expect(forecastHeadroom(30, 20, 1)).toBeCloseTo(0.5, 9);
    expect(forecastHeadroom(30, 20, 0.2)).toBeCloseTo(0.2, 9);
    expect(forecastHeadroom(10, 20, 1)).toBe(0);
    expect(forecastHeadroom(3, 0, 1)).toBe(1);
  });

  test('packHeadroom on the policy: after a drop the forecast stays high, and a replica on a used device keeps room to grow', () => {
    const r = [replica('r1', 'g0', 0.5, 0.5)];
    const cluster = clusterOf(r, [dev('g2', 0.5, 0.6)], false);
    const spec = aFunction().maxScale(5).build();
    const run = (packHeadroom: number) => {
      const p = createPolicy('mlfaas-packed', { packHeadroom }, { capability: cap() });
      let s = p.initialState(spec);
      for (let t = 0; t < 5; t++) s = p.decide(spec, s, observe(120, r, { cluster }), 1000 * (t + 1)).nextState;
      return p.decide(spec, s, observe(30, r, { cluster }), 6000).decision;
    };
    const R = Number(/R=([\d.]+)/.exec(run(1).reason)?.[1]);
    expect(R).toBeGreaterThan(60); // growth (R − 30)/30 > 1: h = the cap
    // no headroom: the new replica (on g0, beside r1 raised to quota 1: occupancy 0.5) takes a quota above 0.5
    expect(run(0).add.some((a) => a.quota > 0.5 + 1e-9)).toBe(true);
    // h = 1: each new replica can double in place, in its slot and within the device's HGO limit
    const d = run(1);
    expect(d.add.length).toBeGreaterThan(0);
    for (const a of d.add) expect(a.quota).toBeLessThanOrEqual(0.5 + 1e-9);
    const grown = 0.5 + d.add.filter((a) => a.gpu === 'g0').reduce((x, a) => x + 2 * a.smShare * a.quota, 0);
    expect(grown).toBeLessThanOrEqual(0.95 + 1e-9);
  });
});
