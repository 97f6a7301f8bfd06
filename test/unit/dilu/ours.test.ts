import { book, makeCluster, type ClusterState, type SchedInstance } from '../../../autoscaler/reproductions/dilu/cluster';
import { CONSOLIDATE_DEFAULTS, OURS_BOUNDS, planDrains, placeOurs } from '../../../autoscaler/multitenant/placement';
import { loadSchedEvents } from '../../../autoscaler/sim/dilu-sched/events';
import { makeSchedPolicy } from '../../../autoscaler/sim/dilu-sched/policies';
import { simulate } from '../../../autoscaler/sim/dilu-sched/simulator';

/** Our placement: best fit, LLM split by fewest parts, consolidation by counted moves. */

const inf = (name: string, r: number, l: number, m: number): SchedInstance => ({ name, type: 'inference', gpuNum: 1, smRequest: r, smLimit: l, memoryGb: [m] });
const put = (c: ClusterState, i: SchedInstance, gpu: number) => book(c, i, [{ gpu, req: i.smRequest, lim: i.smLimit, mem: i.memoryGb[0] }]);

describe('ours: online placement', () => {
  test('best fit: the active GPU left with the least free capacity', () => {
    const c = makeCluster(1, 4);
    put(c, inf('a', 0.2, 0.3, 5), 0);
    put(c, inf('b', 0.5, 0.6, 20), 1);
    expect(placeOurs(c, inf('x', 0.3, 0.4, 10), { ...OURS_BOUNDS, memWeight: 0.5 })!.parts[0].gpu).toBe(1);
  });

  test('an LLM that fits no single GPU is split over the fewest GPUs of one node; a draining GPU takes nothing', () => {
    const c = makeCluster(2, 4);
    put(c, inf('a', 0.3, 0.3, 36), 0); // 4 GB free
    put(c, inf('b', 0.3, 0.3, 28), 1); // 12 GB free
    put(c, inf('c', 0.3, 0.3, 30), 2); // 10 GB free
    const llm: SchedInstance = { ...inf('L', 0.4, 0.6, 22), type: 'llm-inference' };
    const p = placeOurs(c, llm, OURS_BOUNDS)!;
    expect(p.parts.map((x) => [x.gpu, x.mem])).toEqual([[1, 12], [2, 10]]);
    expect(p.parts.every((x) => x.lim === 0.4)).toBe(true);
    expect(placeOurs(c, llm, OURS_BOUNDS, new Set([1]))!.parts.map((x) => x.gpu)).not.toContain(1);
  });
});

describe('ours: consolidation', () => {
  test('drains the least occupied GPU when all its instances fit elsewhere, and leaves the counters as they were', () => {
    const c = makeCluster(1, 4);
    put(c, inf('a', 0.5, 0.6, 20), 0);
    put(c, inf('b', 0.2, 0.3, 5), 1);
    const before = c.gpus.map((g) => [g.smReq, g.smLim, g.mem]);
    const draining = new Set<number>();
    const moves = planDrains(c, OURS_BOUNDS, CONSOLIDATE_DEFAULTS, 0.5, draining, new Set());
    expect(moves.map((m) => [m.name, m.placement.parts[0].gpu])).toEqual([['b', 0]]);
    expect([...draining]).toEqual([1]);
    expect(c.gpus.map((g) => [g.smReq, g.smLim, g.mem])).toEqual(before);
  });

  test('does not drain when an instance fits nowhere else, nor a GPU with a training part', () => {
    const c = makeCluster(1, 4);
    put(c, inf('a', 0.8, 0.9, 20), 0);
    put(c, inf('b', 0.3, 0.3, 5), 1);
    expect(planDrains(c, OURS_BOUNDS, CONSOLIDATE_DEFAULTS, 0.5, new Set(), new Set())).toEqual([]);
    const t = makeCluster(1, 4);
    book(t, { name: 't', type: 'training', gpuNum: 1, smRequest: 0.2, smLimit: 0.3, memoryGb: [5] }, [{ gpu: 0, req: 0.2, lim: 0.3, mem: 5 }]);
    put(t, inf('x', 0.2, 0.3, 5), 1);
    expect(planDrains(t, OURS_BOUNDS, CONSOLIDATE_DEFAULTS, 0.5, new Set(), new Set()).map((m) => m.name)).toEqual(['x']);
  });

  test('on the authors\' instances-100: no more GPUs than the Dilu port (peak and time-average), no failures, moves counted', () => {
    const events = loadSchedEvents(100);
    const d = simulate(events, makeSchedPolicy('dilu'));
    const o = simulate(events, makeSchedPolicy('ours'));
    expect(o.failures).toBe(0);
    expect(o.peak).toBeLessThanOrEqual(d.peak);
    expect(o.timeAvg).toBeLessThan(d.timeAvg);
    expect(o.moves).toBeGreaterThan(0);
    expect(o.movesByType.training ?? 0).toBe(0);
  });
});
