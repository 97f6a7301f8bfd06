import { correct, NO_CORRECTION } from '../../../autoscaler/training/fapes/correction';
import { coAdapt, goodput, scaledLearningRate, statisticalEfficiency } from '../../../autoscaler/training/fapes/goodput';
import { serverPrice } from '../../../autoscaler/training/fapes/prices';
import { filterRunning, prioritize, type CohortJob } from '../../../autoscaler/training/fapes/priority';
import { chooseServersToReclaim } from '../../../autoscaler/training/fapes/reclaim';

describe('FaPES Fig. 6: reclaim cost/gain heuristic (N_r = 2)', () => {
  test('(a) jobs A and B share servers 1 and 2: reclaim servers 1 and 2 at total cost 2', () => {
    // Text: reclaim costs of servers 1 and 2 are 2 (jobs A and B); the gain of server 1 is 2;
    // after reclaiming server 1, the cost of server 2 drops to 0. job3 and job4 span the same four servers (gain 4 > N_r).
    const r = chooseServersToReclaim(
      [
        { id: 'server1', jobs: ['A', 'B'] },
        { id: 'server2', jobs: ['A', 'B'] },
        { id: 'server3', jobs: ['job3', 'job4'] },
        { id: 'server4', jobs: ['job3', 'job4'] },
        { id: 'server5', jobs: ['job3', 'job4'] },
        { id: 'server6', jobs: ['job3', 'job4'] },
      ],
      2,
    );
    expect(r.servers.sort()).toEqual(['server1', 'server2']);
    expect(r.preempted).toHaveLength(2);
  });

  test('(b) reclaim servers 2 and 3 at total cost 2 (layout reconstructed: the figure is not in the text)', () => {
    const r = chooseServersToReclaim(
      [
        { id: 'server1', jobs: ['E'] },
        { id: 'server2', jobs: ['F'] },
        { id: 'server3', jobs: ['F', 'G'] },
        { id: 'server4', jobs: ['E'] },
        { id: 'server5', jobs: ['E'] },
      ],
      2,
    );
    expect(r.servers.sort()).toEqual(['server2', 'server3']);
    expect(r.preempted).toEqual(['F', 'G']);
  });

  test('idle loaned servers are reclaimed first at no cost', () => {
    const r = chooseServersToReclaim([{ id: 's1', jobs: ['A'] }, { id: 's2', jobs: [] }], 1);
    expect(r).toMatchObject({ servers: ['s2'], preempted: [] });
  });
});

describe('goodput and batch co-adaptation', () => {
  test.each([
    { phi: 100, m: 1, want: 1 },
    { phi: 100, m: 100, want: 101 / 200 },
    { phi: 0, m: 4, want: 0.25 },
  ])('E(φ=$phi, M=$m) = (φ+1)/(φ+M)', ({ phi, m, want }) => {
    expect(statisticalEfficiency(phi, m)).toBeCloseTo(want);
  });

  test('goodput = throughput × M × efficiency', () => {
    expect(goodput({ gpus: [1], iterPerSec: [2] }, 1, 10, 9)).toBeCloseTo((2 * 10 * 10) / 19);
  });

  test('a large GNS favours the larger batch; a small one keeps the small batch', () => {
    const curves = { 64: { gpus: [1, 2], iterPerSec: [10, 12] }, 128: { gpus: [1, 2], iterPerSec: [6, 11] } };
    expect(coAdapt(curves, 64, 10000).batchAt).toEqual([128, 128]);
    expect(coAdapt(curves, 64, 1).batchAt).toEqual([64, 64]);
    // In the job's own units the submitted batch keeps its throughput.
    expect(coAdapt(curves, 64, 1).curve.iterPerSec[0]).toBeCloseTo(10);
  });

  test('learning rate scales linearly with the batch', () => {
    expect(scaledLearningRate(0.1, 64, 256)).toBeCloseTo(0.4);
  });
});

describe('board prices H·(U/H)^(load/capacity)', () => {
  test.each([
    { load: 0, want: 10 },
    { load: 4, want: 1000 },
    { load: 2, want: 100 },
  ])('load $load of 4 with H=10, U=1000 → $want', ({ load, want }) => {
    expect(serverPrice(load, 4, 1000, 10)).toBeCloseTo(want);
  });
});

describe('priorities and pop-up', () => {
  const j = (id: string, waitingRounds: number, queueingSeconds: number, achievement: number): CohortJob => ({
    id, waitingRounds, queueingSeconds, achievement, remainingSeconds: 1e4,
  });
  test('popped-up jobs first, then waiting by queueing time, then running by achievement', () => {
    const order = prioritize([j('run-low', 0, 0, 0.2), j('run-high', 0, 0, 0.9), j('new', 1, 60, 0), j('older', 2, 600, 0), j('starved', 3, 100, 0)]);
    expect(order.map((x) => x.id)).toEqual(['starved', 'older', 'new', 'run-high', 'run-low']);
  });
  test('filtering skips jobs finishing within the round and stops when no gain', () => {
    const running = [
      { ...j('soon', 0, 0, 0.1), remainingSeconds: 30 },
      j('a', 0, 0, 0.3),
      j('b', 0, 0, 0.5),
      j('c', 0, 0, 0.9),
    ];
    const chosen = filterRunning(running, 60, (sel) => (sel.length <= 2 ? 0.8 : 0.1));
    expect(chosen.map((x) => x.id)).toEqual(['a', 'b']);
  });
});

describe('estimation-error correction', () => {
  test('first report sets the factor, later ones are smoothed', () => {
    const c1 = correct(NO_CORRECTION, 100, 80);
    expect(c1.factor).toBeCloseTo(0.8);
    const c2 = correct(c1, 100, 100);
    expect(c2.factor).toBeCloseTo(0.9);
  });
});
