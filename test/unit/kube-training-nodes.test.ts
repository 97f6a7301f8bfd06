/** The training virtual cluster as the policies plan on it, and where a job's pod goes. */
import type { V1Node } from '@kubernetes/client-node';
import { maxWorkersOf, placeOf, samePlace } from '../../gateway/jobs/training-capacity';
import { trainingNodesOf } from '../../gateway/providers/kubernetes/kube-training';
import { harnessPod } from '../../gateway/providers/kubernetes/training-pods';

const node = (name: string, o: { vc?: string; gpus?: number; cpu?: string; ready?: boolean; cordoned?: boolean } = {}): V1Node => ({
  metadata: { name, labels: o.vc ? { 'mlfaas.io/vc': o.vc } : {} },
  spec: { unschedulable: o.cordoned ?? false },
  status: { allocatable: { cpu: o.cpu ?? '16', ...(o.gpus ? { 'nvidia.com/gpu': String(o.gpus) } : {}) },
    conditions: [{ type: 'Ready', status: o.ready === false ? 'False' : 'True' }] },
});

describe('training nodes', () => {
  it('GPU nodes of the training cluster, sorted; slots per node the smallest power of two of their GPUs', () => {
    const t = trainingNodesOf([node('g2', { vc: 'training', gpus: 8 }), node('g1', { vc: 'training', gpus: 6 }), node('i1', { vc: 'inference', gpus: 8 }),
      node('g3', { vc: 'training', gpus: 8, ready: false }), node('g4', { vc: 'training', gpus: 8, cordoned: true })], 4);
    expect(t).toEqual({ spec: { nodes: 2, gpusPerNode: 4 }, nodes: ['g1', 'g2'], gpuDevices: true });
  });

  it('nodes without GPUs: a slot is a core, at most the configured slots and the smallest node', () => {
    expect(trainingNodesOf([node('c1', { vc: 'training', cpu: '3' }), node('c2', { vc: 'training', cpu: '8' })], 4))
      .toEqual({ spec: { nodes: 2, gpusPerNode: 2 }, nodes: ['c1', 'c2'], gpuDevices: false });
    expect(trainingNodesOf([node('c1', { vc: 'inference' })], 4)).toEqual({ spec: { nodes: 0, gpusPerNode: 0 }, nodes: [], gpuDevices: false });
  });

  it('a placement becomes one node and its device indices (or a core count)', () => {
    const gpu = { spec: { nodes: 2, gpusPerNode: 4 }, nodes: ['g1', 'g2'], gpuDevices: true };
    expect(placeOf(gpu, [5, 6])).toEqual({ node: 'g2', devices: [1, 2] });
    expect(placeOf(gpu, [])).toBeUndefined();
    expect(placeOf({ ...gpu, gpuDevices: false }, [4, 5, 6, 7])).toEqual({ node: 'g2', cpus: 4 });
    expect(maxWorkersOf(16, gpu)).toBe(4); // a job is one pod: at most one node
    expect(maxWorkersOf(undefined, gpu)).toBe(4);
    expect(samePlace({ node: 'g1', devices: [0] }, { node: 'g1', devices: [1] })).toBe(false);
    expect(samePlace({ node: 'g1', cpus: 2 }, { node: 'g1', cpus: 2 })).toBe(true);
  });

  it('a profile run goes to any training node, with its workers as GPUs or cores, on scratch space', () => {
    const p = harnessPod('profile-x', { a: 'b' }, { WORKERS: '2' }, { namespace: 'fn', image: 'i:1' }, { gpus: 2 });
    expect(p.spec!.affinity!.nodeAffinity!.requiredDuringSchedulingIgnoredDuringExecution!.nodeSelectorTerms[0].matchExpressions)
      .toEqual([{ key: 'mlfaas.io/vc', operator: 'In', values: ['training'] }]);
    expect(p.spec!.containers[0].resources).toEqual({ limits: { 'nvidia.com/gpu': '2' } });
    expect(p.spec!.volumes).toEqual([{ name: 'checkpoints', emptyDir: {} }]);
    expect(harnessPod('p', {}, {}, { namespace: 'fn', image: 'i:1' }, { cpus: 2 }).spec!.containers[0].resources)
      .toEqual({ requests: { cpu: '2' }, limits: { cpu: '2' } });
  });
});
