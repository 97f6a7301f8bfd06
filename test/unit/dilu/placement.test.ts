import { book, fits, makeCluster, unbook, type ClusterState, type SchedInstance } from '../../../autoscaler/reproductions/dilu/cluster';
import { DILU_PLACEMENT, placeDilu } from '../../../autoscaler/reproductions/dilu/placement';
import { weightedScore } from '../../../autoscaler/reproductions/dilu/select';

/** Dilu's Algorithm 1 (ASPLOS'25) on hand-built clusters. */

const inf = (name: string, r: number, l: number, m: number): SchedInstance => ({ name, type: 'inference', gpuNum: 1, smRequest: r, smLimit: l, memoryGb: [m] });
const llm = (name: string, r: number, l: number, m: number): SchedInstance => ({ ...inf(name, r, l, m), type: 'llm-inference' });
const train = (name: string, n: number, r: number, l: number, m: number): SchedInstance => ({
  name, type: 'training', gpuNum: n, smRequest: r, smLimit: l, memoryGb: Array(n).fill(m),
});

function place(c: ClusterState, i: SchedInstance, serviceOf?: (n: string) => string): number[] {
  const p = placeDilu(c, i, DILU_PLACEMENT, undefined, serviceOf);
  if (!p) throw new Error(`${i.name} not placed`);
  book(c, i, p.parts, p.release);
  return p.parts.map((x) => x.gpu);
}

describe('Dilu Algorithm 1: feasibility (Ω = 1, γ = 1.5, 40 GB)', () => {
  test.each([
    { name: 'fits', booked: [0.5, 0.8, 20], add: [0.5, 0.7, 20], want: true },
    { name: 'Σrequest over Ω', booked: [0.5, 0.8, 20], add: [0.51, 0.6, 1], want: false },
    { name: 'Σlimit over γ', booked: [0.3, 1.0, 20], add: [0.3, 0.51, 1], want: false },
    { name: 'memory over 40 GB', booked: [0.1, 0.1, 35], add: [0.1, 0.1, 6], want: false },
  ])('$name', ({ booked, add, want }) => {
    const c = makeCluster(1, 4);
    const g = c.gpus[0];
    [g.smReq, g.smLim, g.mem] = booked;
    expect(fits(g, add[0], add[1], add[2], DILU_PLACEMENT, 40)).toBe(want);
  });

  test('SelectOptGPU score: 0.6·(1 − SM requested) + 0.4·(1 − memory / 40) after placement', () => {
    const c = makeCluster(1, 4);
    c.gpus[0].smReq = 0.5;
    c.gpus[0].mem = 10;
    expect(weightedScore(0.6, 0.4, 40)(c.gpus[0], 0.3, 10)).toBeCloseTo(0.6 * 0.2 + 0.4 * 0.5, 12);
  });
});

describe('Dilu Algorithm 1: inference', () => {
  test('best fit over active GPUs by the weighted score, then a new GPU from the pool head', () => {
    const c = makeCluster(2, 4);
    expect(place(c, inf('a', 0.5, 0.7, 20))).toEqual([0]);
    expect(place(c, inf('b', 0.6, 0.8, 10))).toEqual([1]); // Σrequest 1.1 > Ω on GPU 0: new GPU
    // GPU 0 after: 0.6·(1 − 0.8) + 0.4·(1 − 25/40) = 0.27; GPU 1: 0.6·0.1 + 0.4·0.625 = 0.31
    expect(place(c, inf('c', 0.3, 0.4, 5))).toEqual([0]);
    expect(c.active.map((g) => g.id)).toEqual([0, 1]);
  });

  test('workload affinity: the other GPUs of a training job beside an earlier instance of the same service come first', () => {
    const c = makeCluster(2, 4);
    expect(place(c, train('t', 2, 0.5, 0.7, 20))).toEqual([0, 1]);
    const svc = (n: string) => n.split('#')[0];
    expect(place(c, inf('s#1', 0.3, 0.4, 5), svc)).toEqual([0]);
    // a third active GPU that would score better (fuller) does not win over the affinity GPU 1
    place(c, inf('x', 0.6, 0.6, 30));
    expect(place(c, inf('s#2', 0.3, 0.4, 5), svc)).toEqual([1]);
    // without affinity (another service) the best score wins: GPU 2 (0.6·0.1 + 0.4·(1 − 35/40)) over GPU 0/1
    expect(place(c, inf('other', 0.3, 0.4, 5), svc)).toEqual([2]);
  });

  test('an emptied GPU goes back to the end of the pool', () => {
    const c = makeCluster(1, 4);
    place(c, inf('a', 0.9, 0.9, 5));
    place(c, inf('b', 0.9, 0.9, 5));
    expect(unbook(c, 'a')).toBe(true);
    expect(c.active.map((g) => g.id)).toEqual([1]);
    expect(c.pool.map((g) => g.id)).toEqual([2, 3, 0]);
    expect(unbook(c, 'a')).toBe(false);
  });
});

describe('Dilu Algorithm 1: LLM inference', () => {
  test('splits memory over one node\'s SM-fitting active GPUs, fullest first, each part booked request = limit = r', () => {
    const c = makeCluster(2, 4);
    place(c, train('t', 2, 0.4, 0.5, 30)); // GPUs 0, 1: 10 GB free each
    place(c, inf('i', 0.2, 0.3, 4)); // best fit: GPU 0 (36 GB)
    const gpus = place(c, llm('L', 0.4, 0.6, 14)); // no single GPU has 14 GB: split, fullest first
    expect(gpus).toEqual([0, 1]);
    const parts = c.placed.get('L')!.parts;
    expect(parts.map((p) => p.mem)).toEqual([6, 8]); // GPU 0 has 40 − 34 = 6 GB free, the rest on GPU 1
    expect(parts.every((p) => p.req === 0.4 && p.lim === 0.4)).toBe(true);
    // deleting it subtracts l (0.6) per part, as the artifact does: the limit sum drifts down by l − r
    unbook(c, 'L');
    expect(c.gpus[1].smLim).toBeCloseTo(0.5 - 0.2, 12);
  });

  test('an LLM that fits one active GPU takes the best fit; none fitting and no split: the pool head', () => {
    const c = makeCluster(2, 4);
    place(c, llm('L1', 0.5, 0.7, 20));
    expect(place(c, llm('L2', 0.4, 0.6, 20))).toEqual([0]);
    expect(place(c, llm('L3', 0.4, 0.6, 20))).toEqual([1]);
  });
});

describe('Dilu Algorithm 1: training', () => {
  test('n GPUs on one node, fitting active GPUs first, else the first node with enough pool GPUs', () => {
    const c = makeCluster(3, 4);
    place(c, inf('a', 0.2, 0.3, 5)); // GPU 0, node 0
    place(c, inf('b', 0.9, 0.9, 5)); // GPU 1 (no room on GPU 0)
    // 4 GPUs needed: node 0 has GPU 0 (fits) + GPUs 2, 3 in the pool = 3 < 4; GPU 1 does not fit → node 1
    expect(place(c, train('t4', 4, 0.5, 0.7, 25))).toEqual([4, 5, 6, 7]);
    // 2 GPUs: node 0 has GPU 0 active (fits) + pool GPUs 2, 3 → active first
    expect(place(c, train('t2', 2, 0.5, 0.7, 25))).toEqual([0, 2]);
  });
});
