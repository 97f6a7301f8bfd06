/**
 * The artifact's placement state: per-switch node ids with a stable sort decide which nodes a job
 * gets, and the GPU ranks (which key the overhead cache) follow the log's switch-major row.
 */
import { ArtifactCluster } from '../../../autoscaler/reproductions/elasticflow/placement';

describe('ArtifactCluster (elastic_placement, release_job_res, scheduling_result ranks)', () => {
  const twoSwitches = { nodes: 4, gpusPerNode: 8, nodesPerSwitch: 2 };

  test('free nodes start switch by switch, and are sorted by per-switch id once a set is released', () => {
    const c = new ArtifactCluster(twoSwitches);
    expect(c.place([['a', 8], ['b', 8]]).get('b')![0]).toBe(8); // s0n0, then s0n1 (row position 1)
    c.release('a');
    c.release('b');
    // free: [s1n0, s1n1] + [s0n0, s0n1] sorted by id, stable: s1n0, s0n0, s1n1, s0n1
    const r = c.place([['big', 16]]);
    // the set is s1n0 + s0n0; the log gives consecutive ranks from the first node in row order (s0n0)
    expect(r.get('big')).toEqual([...Array(16).keys()]);
    c.release('big');
    expect(c.place([['x', 8]]).get('x')![0]).toBe(2 * 8); // s1n0 (row position 2) was freed first
  });

  test('small jobs share a node, ranks consecutive in placement order; larger classes first', () => {
    const c = new ArtifactCluster({ nodes: 1, gpusPerNode: 8 });
    const r = c.place([['a', 1], ['b', 4], ['c', 2], ['d', 1]]);
    expect(r.get('b')).toEqual([0, 1, 2, 3]);
    expect(r.get('c')).toEqual([4, 5]);
    expect(r.get('a')).toEqual([6]);
    expect(r.get('d')).toEqual([7]);
  });

  test('release order decides which same-id node comes first next time', () => {
    const first = (releaseOrder: string[]) => {
      const c = new ArtifactCluster(twoSwitches);
      c.place([['x', 8], ['y', 8]]); // s0n0, s0n1
      c.release('x');
      c.release('y'); // free: s1n0, s0n0, s1n1, s0n1
      c.place([['p', 8], ['q', 8]]); // p on s1n0 (pos 2), q on s0n0 (pos 0)
      for (const id of releaseOrder) c.release(id);
      return c.place([['z', 8]]).get('z')![0] / 8;
    };
    // p first: [s1n1, s0n1] + s1n0 → s1n0, s1n1, s0n1; + s0n0 → s1n0, s0n0, ...
    expect(first(['p', 'q'])).toBe(2);
    // q first: [s1n1, s0n1] + s0n0 → s0n0, s1n1, s0n1; + s1n0 → s0n0, s1n0, ...
    expect(first(['q', 'p'])).toBe(0);
  });
});
