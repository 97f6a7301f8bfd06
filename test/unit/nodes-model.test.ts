// GET /system/nodes as data (gateway/routes/nodes-model.ts) and a Kubernetes node's facts (node-facts.ts): pure, table-driven.
import type { V1Node } from '@kubernetes/client-node';
import { nodeFacts } from '../../gateway/providers/kubernetes/node-facts';
import { type ClusterNodeFacts, clusterNodes, clusterViews, noClusters, tokendView } from '../../gateway/routes/nodes-model';
import type { TokendStats } from '../../node-runtime/tokend-control';

const enforcement = { spatial: 'cpuset', temporal: 'cfs', memory: 'cgroup', summary: 's' } as const;
const client = (id: number, device: string, o: Record<string, unknown> = {}) => ({
  id, pid: 100 + id, uid: 0, cgroup: '/x', device, slo: id === 1, request: 0.25, limit: 0.5, smShare: 1, state: 'NONE' as const,
  lastGrantNs: 5_000_000, grantedNs: 2_000_000_000, usedNs: 500_000_000, launches: 42, ...o,
});

describe('tokendView', () => {
  it('turns STATS into rows: ns as ms, used of granted, sorted by device then id, RCKM C per device', () => {
    const stats: TokendStats = { policy: 'dilu', windowNs: 20_000_000, windowSeq: 7, gpus: 1,
      clients: [client(3, 'gpu0', { smShare: 0.5, state: 'CONTENTION' }), client(2, 'cpu', { grantedNs: 0, usedNs: 0 }), client(1, 'cpu')],
      rckm: [{ device: 'gpu0', c: 0.123456, low: 0.2, cycles: 9 }] };
    const v = tokendView('tokend STATS on /s', stats);
    expect(v).toMatchObject({ source: 'tokend STATS on /s', available: true, policy: 'dilu', windowMs: 20, windowSeq: 7 });
    expect(v.clients.map((c) => [c.device, c.id])).toEqual([['cpu', 1], ['cpu', 2], ['gpu0', 3]]);
    expect(v.clients[0]).toMatchObject({ pid: 101, slo: true, request: 0.25, limit: 0.5, lastGrantMs: 5, grantedMs: 2000, usedMs: 500, usedOfGranted: 0.25,
      launches: 42 });
    expect(v.clients[1].usedOfGranted).toBe(0);
    expect(v.clients[2]).toMatchObject({ smShare: 0.5, state: 'CONTENTION' });
    expect(v.rckm).toEqual([{ device: 'gpu0', c: 0.1235, low: 0.2, cycles: 9 }]);
  });

  it.each([
    { name: 'absent', error: undefined, want: { available: false, clients: [], rckm: [] } },
    { name: 'failed', error: 'tokend: no answer in 100 ms', want: { available: false, error: 'tokend: no answer in 100 ms', clients: [] } },
  ])('says why there are no clients ($name)', ({ error, want }) => {
    expect(tokendView('why', undefined, error)).toMatchObject({ source: 'why', ...want });
  });
});

describe('clusterViews and clusterNodes', () => {
  const n = (name: string, vc?: string, homeVc?: string, unschedulable = false): ClusterNodeFacts =>
    ({ name, ...(vc ? { vc } : {}), ...(homeVc ? { homeVc } : {}), cpuCores: 8, gpus: 2, unschedulable });

  it('groups nodes by mlfaas.io/vc and lists as loans the nodes away from their home cluster', () => {
    const facts = [n('c', 'training', 'inference', true), n('a', 'inference', 'inference'), n('b', 'training'), n('d'), n('e', 'training', 'inference')];
    const v = clusterViews(facts, 'api');
    expect(v.virtualClusters).toEqual({ source: 'api', clusters: [{ name: 'inference', nodes: ['a'] }, { name: 'training', nodes: ['b', 'c', 'e'] }] });
    expect(v.loans).toEqual({ source: 'api', loans: [{ node: 'c', from: 'inference', to: 'training', moving: true },
      { node: 'e', from: 'inference', to: 'training', moving: false }] });
  });

  it.each([
    { name: 'no nodes', facts: [], vc: /no node carries the mlfaas.io\/vc label/, loans: /nothing can be loaned/ },
    { name: 'no home labels', facts: [n('a', 'inference')], vc: /^api$/, loans: /no node is labelled mlfaas.io\/home-vc/ },
  ])('explains empty lists ($name)', ({ facts, vc, loans }) => {
    const v = clusterViews(facts, 'api');
    expect(v.virtualClusters.source).toMatch(vc);
    expect(v.loans).toMatchObject({ loans: [] });
    expect(v.loans.source).toMatch(loans);
  });

  it('gives each node its devices, cluster and the provider\'s enforcement', () => {
    const [a] = clusterNodes([n('a', 'training', 'inference')], enforcement);
    expect(a).toEqual({ name: 'a', devices: { cpuCores: 8, gpus: [{ index: 0, name: 'nvidia.com/gpu' }, { index: 1, name: 'nvidia.com/gpu' }] },
      enforcement, virtualCluster: 'training', homeCluster: 'inference', unschedulable: false });
    expect(noClusters('local')).toEqual({ virtualClusters: { source: 'local', clusters: [] }, loans: { source: 'local', loans: [] } });
  });
});

describe('nodeFacts (a Kubernetes node)', () => {
  it.each([
    { name: 'labelled GPU node, cordoned', node: { metadata: { name: 'g1', labels: { 'mlfaas.io/vc': 'training', 'mlfaas.io/home-vc': 'inference' } },
      spec: { unschedulable: true }, status: { allocatable: { cpu: '7500m', 'nvidia.com/gpu': '2' } } },
    want: { name: 'g1', vc: 'training', homeVc: 'inference', cpuCores: 7.5, gpus: 2, unschedulable: true } },
    { name: 'bare node', node: { metadata: { name: 'n' }, status: { allocatable: { cpu: '4' } } },
      want: { name: 'n', cpuCores: 4, gpus: 0, unschedulable: false } },
  ])('$name', ({ node, want }) => {
    expect(nodeFacts(node as V1Node)).toEqual(want);
  });
});
