import { makeCluster, type SchedInstance } from '../../../autoscaler/reproductions/dilu/cluster';
import { placeExclusive, placeInfless } from '../../../autoscaler/reproductions/dilu/baselines';
import { loadSchedEvents, parseSchedEvents, type SchedEvent } from '../../../autoscaler/sim/dilu-sched/events';
import { makeSchedPolicy } from '../../../autoscaler/sim/dilu-sched/policies';
import { simulate, type SchedPolicy } from '../../../autoscaler/sim/dilu-sched/simulator';

/** Dilu's scheduling simulator and the artifact's baselines. */

const inf = (name: string, r: number, l: number, m: number): SchedInstance => ({ name, type: 'inference', gpuNum: 1, smRequest: r, smLimit: l, memoryGb: [m] });
const ev = (t: number, action: 'start' | 'delete', inst: SchedInstance): SchedEvent => ({ t, action, inst });

describe('baselines as the artifact codes them', () => {
  test('INFless-l books the limit as the request; INFless-r the request as the limit', () => {
    const c = makeCluster(1, 4);
    expect(placeInfless(c, inf('a', 0.3, 0.5, 4), 'limit')!.parts[0]).toMatchObject({ req: 0.5, lim: 0.5 });
    expect(placeInfless(c, inf('a', 0.3, 0.5, 4), 'request')!.parts[0]).toMatchObject({ req: 0.3, lim: 0.3 });
  });

  test('Exclusive (Kubernetes default) gives every instance new GPUs', () => {
    const c = makeCluster(2, 4);
    const p = placeExclusive(c, { ...inf('t', 0.3, 0.5, 30), type: 'training', gpuNum: 2, memoryGb: [30, 30] });
    expect(p!.parts.map((x) => x.gpu)).toEqual([0, 1]);
  });
});

describe('simulate', () => {
  const events = [
    ev(0, 'start', inf('a', 0.6, 0.6, 10)),
    ev(10, 'start', inf('b', 0.6, 0.6, 10)), // 2 GPUs
    ev(20, 'start', inf('c', 0.3, 0.3, 10)), // joins a GPU
    ev(30, 'delete', inf('a', 0.6, 0.6, 10)),
    ev(40, 'delete', inf('b', 0.6, 0.6, 10)),
  ];

  test('peak, time-weighted average (each sample held to the next event) and fragmentation at the first peak', () => {
    const r = simulate(events, makeSchedPolicy('dilu'));
    expect(r.peak).toBe(2);
    // counts 1 (0–10 s), 2 (10–30), 2 or 1 after 'a' leaves (c sits with a or b), 0 at 40
    const c = makeCluster(1000, 4);
    expect(c.gpus).toHaveLength(4000);
    expect(r.timeAvg).toBeGreaterThanOrEqual((1 * 10 + 2 * 20 + 1 * 10) / 40);
    expect(r.timeAvg).toBeLessThanOrEqual((1 * 10 + 2 * 30) / 40);
    // at the first peak (t = 10): GPUs with 0.6 and 0.6 requested, 10 GB each
    expect(r.fragAtPeak.sm).toBeCloseTo(0.4, 12);
    expect(r.fragAtPeak.mem).toBeCloseTo(0.75, 12);
    expect(r.failures).toBe(0);
  });

  test('an instance that fits nowhere is a failure, not a crash', () => {
    const r = simulate([ev(0, 'start', inf('big', 0.5, 0.5, 41))], makeSchedPolicy('dilu'));
    expect(r.failures).toBe(1);
    expect(r.peak).toBe(0);
  });

  test('a move keeps both places booked until it ends, and is counted', () => {
    let moved = false;
    const inner = makeSchedPolicy('dilu');
    const policy: SchedPolicy = {
      name: 'mover',
      cluster: inner.cluster,
      place: inner.place,
      rebalance: (c, now) => {
        if (moved || now < 20) return [];
        moved = true;
        // move 'c' to a new GPU (5): three GPUs active for the 15 s the move lasts
        return [{ name: 'c', placement: { parts: [{ gpu: 5, req: 0.3, lim: 0.3, mem: 10 }], release: { req: 0.3, lim: 0.3 } }, durationS: 15 }];
      },
    };
    const r = simulate(events, policy);
    expect(r.moves).toBe(1);
    expect(r.peak).toBe(3);
    expect(r.movesPerHour).toBeCloseTo(3600 / 40, 9);
  });

  test('parses the artifact\'s event lines', () => {
    const e = parseSchedEvents('{"Time":"2024-06-19 15:46:09","Action":"start","Instance":{"service_name":"t","type":"training","gpu_num":2,' +
      '"sm_requests":0.55,"sm_limits":0.81,"memory":[30,30]}}\n{"Time":"2024-06-19 15:46:19","Action":"delete","Instance":{"service_name":"t",' +
      '"type":"training","gpu_num":2,"sm_requests":0.55,"sm_limits":0.81,"memory":[30,30]}}\n');
    expect(e.map((x) => [x.t, x.action, x.inst.gpuNum])).toEqual([[0, 'start', 2], [10, 'delete', 2]]);
    expect(() => parseSchedEvents('{"Time":"x","Action":"start","Instance":{"type":"gpu"}}')).toThrow(/line 1/);
  });
});

describe('fidelity on the authors\' input (instances-100, ../shared/data)', () => {
  const events = loadSchedEvents(100);
  test.each([
    { policy: 'dilu' as const, peak: 82, avg: 65.1 },
    { policy: 'infless-l' as const, peak: 116, avg: 76.4 },
    { policy: 'infless-r' as const, peak: 79, avg: 63.3 },
    { policy: 'exclusive' as const, peak: 132, avg: 78.0 },
  ])('$policy within 5 % of the authors\' $peak / $avg', ({ policy, peak, avg }) => {
    const r = simulate(events, makeSchedPolicy(policy, { seed: 1 }));
    expect(Math.abs(r.peak - peak) / peak).toBeLessThanOrEqual(0.05);
    expect(Math.abs(r.timeAvg - avg) / avg).toBeLessThanOrEqual(0.05);
    expect(r.failures).toBe(0);
  });
});
