import { packOnUsed, planMove, takes } from '../../../autoscaler/inference/placement-migrate';
import { createPolicy } from '../../../autoscaler/inference/registry';
import type { ClusterView, GpuView } from '../../../autoscaler/inference/types';
import { aFunction, cap, observe, replica } from '../../autoscaler/fixtures';

const slot = (smShare: number, ...members: Array<[string, string, number]>) =>
  ({ smShare, members: members.map(([replicaId, fn, quota]) => ({ replicaId, fn, quota })) });

describe('mlfaas-packed consolidation by migration (issue 24)', () => {
  // f's replicas: a on the nearly empty gA (alone), b on gB beside another function; gC is the fullest
  const gA: GpuView = { id: 'gA', slots: [slot(0.2, ['a', 'f', 0.5])] };
  const gB: GpuView = { id: 'gB', slots: [slot(0.2, ['b', 'f', 0.5]), slot(0.4, ['o1', 'o', 0.8])] };
  const gC: GpuView = { id: 'gC', slots: [slot(0.2, ['o2', 'o', 0.4]), slot(0.6, ['o3', 'o', 0.9])] };
  const reps = [replica('a', 'gA', 0.2, 0.5), replica('b', 'gB', 0.2, 0.5)];
  const cluster: ClusterView = { gpus: [gA, gB, gC], canAddGpu: true };

  test('takes: join a slot of the same SM share with quota room, else open one while SMs are free', () => {
    expect(takes(gC, 0.2, 0.5, 48, 0.95)).toBe('join');
    expect(takes(gC, 0.2, 0.7, 48, 0.95)).toBe('open'); // the 0.2 slot lacks room; 0.2 of the SMs are free
    expect(takes(gC, 0.3, 0.5, 48, 0.95)).toBeUndefined(); // no 0.3 slot, too few SMs free
    expect(takes(gC, 0.2, 0.5, 48, 0.7)).toBeUndefined(); // 0.62 + 0.1 over the occupancy limit
    expect(takes(gB, 0.1, 0.5, 48, 0.95)).toBe('open');
    expect(takes(gB, 0.1, 0.5, 2, 0.95)).toBeUndefined(); // two slots already: MPS rows full
  });

  test('the emptiest device is emptied onto the fullest that takes the replica (joining its slot)', () => {
    const plan = planMove(observe(10, reps, { cluster }), 'f', 0.3, 48, 0.95);
    expect(plan).toEqual({ from: 'gA', drain: ['a'], add: [{ gpu: 'gC', smShare: 0.2, quota: 0.5, batchSize: 1 }] });
  });

  test('no move above the occupancy bound, nor when nothing fuller takes the replicas', () => {
    expect(planMove(observe(10, reps, { cluster }), 'f', 0.05, 48, 0.95)).toBeUndefined();
    const tight: ClusterView = { gpus: [gA, { id: 'gC', slots: [slot(1, ['o2', 'o', 0.9])] }], canAddGpu: true };
    expect(planMove(observe(10, [reps[0]], { cluster: tight }), 'f', 0.3, 48, 0.95)).toBeUndefined();
  });

  test('the SLO guard replica bound for a new device goes to a used one that takes it', () => {
    const obs = observe(10, reps, { cluster });
    expect(packOnUsed(obs, { gpu: 'new:slo-guard', smShare: 0.2, quota: 0.5, batchSize: 1 }, 48, 0.95).gpu).toBe('gC');
    expect(packOnUsed(obs, { gpu: 'new:slo-guard', smShare: 1, quota: 1, batchSize: 1 }, 48, 0.95).gpu).toBe('new:slo-guard');
  });

  test('the policy moves on a quiet tick and drains the original only once every replica is ready', () => {
    const p = createPolicy('mlfaas-packed', {}, { capability: cap() });
    const spec = aFunction().build();
    let s = p.initialState(spec);
    let moved: string[] = [];
    // steady load the two replicas carry: the hybrid changes nothing on some tick, and the move starts then
    for (let t = 0; t < 30 && moved.length === 0; t++) {
      const out = p.decide(spec, s, observe(4, reps, { cluster }), 1000 * (t + 1));
      s = out.nextState;
      if (/consolidate/.test(out.decision.reason)) {
        expect(out.decision.add).toEqual([{ gpu: 'gC', smShare: 0.2, quota: 0.5, batchSize: 1 }]);
        expect(out.decision.remove).toEqual([]);
        moved = ['a'];
      }
    }
    expect(moved).toEqual(['a']);
    // the copy is starting: a is kept
    const copy = replica('a2', 'gC', 0.2, 0.5, { ready: false });
    const gC2: GpuView = { id: 'gC', slots: [slot(0.2, ['o2', 'o', 0.4], ['a2', 'f', 0.5]), slot(0.6, ['o3', 'o', 0.9])] };
    const c2: ClusterView = { gpus: [gA, gB, gC2], canAddGpu: true };
    const starting = p.decide(spec, s, observe(4, [...reps, copy], { cluster: c2 }), 40_000);
    expect(starting.decision.remove).not.toContain('a');
    // ready: a goes
    const ready = p.decide(spec, starting.nextState, observe(4, [...reps, { ...copy, ready: true }], { cluster: c2 }), 41_000);
    expect(ready.decision.remove).toContain('a');
    expect(ready.decision.reason).toMatch(/drained a/);
  });
});
