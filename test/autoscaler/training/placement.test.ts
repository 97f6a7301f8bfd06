import { buddyPlace } from '../../../autoscaler/training/placement/buddy';
import { cluster } from './fixtures';

const nodesOf = (gpus: readonly number[], gpn: number) => [...new Set(gpus.map((g) => Math.floor(g / gpn)))];

describe('buddy best-fit placement', () => {
  test.each<{ name: string; alloc: Record<string, number>; nodes: number }>([
    { name: 'small jobs stay inside one node', alloc: { a: 4, b: 2, c: 1, d: 1 }, nodes: 2 },
    { name: 'a 16-GPU job takes two whole adjacent nodes', alloc: { big: 16, s: 8 }, nodes: 4 },
    { name: 'a full cluster of mixed power-of-two jobs fits without fragmentation', alloc: { a: 8, b: 4, c: 2, d: 1, e: 1, f: 16 }, nodes: 4 },
  ])('$name', ({ alloc, nodes }) => {
    const p = buddyPlace(alloc, cluster(nodes, 8));
    const all = Object.values(p).flat();
    expect(new Set(all).size).toBe(all.length);
    for (const [id, n] of Object.entries(alloc)) {
      expect(p[id]).toHaveLength(n);
      if (n <= 8) expect(nodesOf(p[id], 8)).toHaveLength(1);
      else expect(nodesOf(p[id], 8)).toHaveLength(n / 8);
      expect(p[id][0] % n).toBe(0); // aligned block
    }
  });

  test('best fit: a 2-GPU job goes to the fuller node', () => {
    const p = buddyPlace({ a: 4, b: 2 }, cluster(2, 8), { a: [8, 9, 10, 11] });
    expect(p.a).toEqual([8, 9, 10, 11]);
    expect(nodesOf(p.b, 8)).toEqual([1]);
  });

  test('jobs keep their previous GPUs when still free', () => {
    const p = buddyPlace({ a: 2, b: 2 }, cluster(1, 8), { a: [6, 7], b: [2, 3] });
    expect(p).toEqual({ a: [6, 7], b: [2, 3] });
  });

  test('over-allocation is an error', () => {
    expect(() => buddyPlace({ a: 8, b: 1 }, cluster(1, 8))).toThrow(/needs 1 GPUs, 0 free/);
  });
});
