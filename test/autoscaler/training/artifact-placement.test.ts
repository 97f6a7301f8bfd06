/**
 * The artifact's placement state: per-switch node ids with a stable sort decide which nodes a job
 * gets, and the GPU ranks (which key the overhead cache) follow the log's switch-major row.
 */
import { ArtifactCluster } from '../../../autoscaler/sim/training/artifact-placement';

describe('ArtifactCluster (elastic_placement, release_job_res, scheduling_result ranks)', () => {
  const twoSwitches = { nodes: 4, gpusPerNode: 8, nodesPerSwitch: 2 };

  test('free nodes are taken by per-switch id: a 16-GPU job spans node 0 of both switches', () => {
    const c = new ArtifactCluster(twoSwitches);
    const r = c.place([['big', 16]]);
    // switch 0 node 0 = row position 0, switch 1 node 0 = row position 2; the log gives the job
    // consecutive ranks from its first node's position
    expect(r.get('big')).toEqual([...Array(16).keys()]);
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
    // free list at start, stable by id: s0n0 (pos 0), s1n0 (pos 2), s0n1 (pos 1), s1n1 (pos 3)
    const first = (releaseOrder: string[]) => {
      const c = new ArtifactCluster(twoSwitches);
      c.place([['x', 8], ['y', 8]]); // x on pos 0, y on pos 2
      for (const id of releaseOrder) c.release(id);
      return c.place([['z', 8]]).get('z')![0] / 8;
    };
    expect(first(['y', 'x'])).toBe(2); // [s1n0, s0n0, s0n1, s1n1]: y's node first
    expect(first(['x', 'y'])).toBe(0); // [s0n0, s1n0, ...]
  });
});
