/**
 * `GET /system/nodes` as data (issue 26, the dashboard's #/nodes): each node's devices and what is
 * enforced on them, tokend's clients and grants (its control socket's STATS), and the virtual
 * clusters with their loans (Kubernetes, FaPES). Pure: the route reads the sources (bounded) and
 * hands the results, or why there are none, to these functions.
 */
import type { Enforcement } from '../providers/function-provider';
import type { TokendClientStats, TokendStats } from '../../node-runtime/tokend-control';

/** A node's devices: its CPU cores and its GPUs. */
export interface NodeDevices {
  cpuCores: number;
  gpus: Array<{ index: number; name: string; memoryMiB?: number }>;
  /** How the GPUs are set up (MPS, limiter), as `/system/info`'s `mlfaas.gpus` says it. */
  gpuSetup?: string;
}

/** One node as the page shows it. */
export interface NodeView {
  name: string;
  devices: NodeDevices;
  /** What is enforced on each replica of this node (`/system/info`'s `mlfaas.enforcement`). */
  enforcement: Enforcement;
  /** The node's virtual cluster (Kubernetes); absent on one local node. */
  virtualCluster?: string;
  /** The cluster it belongs to when nothing is loaned (`mlfaas.io/home-vc`). */
  homeCluster?: string;
  /** Cordoned (a move between clusters in progress, or by hand). */
  unschedulable?: boolean;
}

/** A Kubernetes node as the provider lists it (labels read, quantities parsed). */
export interface ClusterNodeFacts {
  name: string;
  /** `mlfaas.io/vc` */
  vc?: string;
  /** `mlfaas.io/home-vc` */
  homeVc?: string;
  cpuCores: number;
  gpus: number;
  unschedulable: boolean;
}

/** One tokend client row: quotas as fractions, times in ms. */
export interface TokendClientRow {
  id: number;
  pid: number;
  device: string;
  slo: boolean;
  request: number;
  limit: number;
  smShare: number;
  state: TokendClientStats['state'];
  lastGrantMs: number;
  grantedMs: number;
  usedMs: number;
  /** used / granted (0 when nothing was granted yet) */
  usedOfGranted: number;
  launches: number;
  cgroup: string;
}

export interface TokendView {
  /** Where the numbers come from, or why there are none. */
  source: string;
  available: boolean;
  /** The failure when tokend should have answered and did not (timeout, refused). */
  error?: string;
  policy?: 'default' | 'dilu';
  windowMs?: number;
  windowSeq?: number;
  clients: TokendClientRow[];
  /** tokend --policy dilu: RCKM's conservative limit C per device. */
  rckm: Array<{ device: string; c: number; low: number; cycles: number }>;
}

export interface VirtualClusterView {
  name: string;
  nodes: string[];
}

/** A node of the inference cluster serving training now. */
export interface LoanView {
  node: string;
  from: string;
  to: string;
  /** true while the node is cordoned (its move is in progress) */
  moving: boolean;
}

export interface NodesAnswer {
  /** RFC3339 */
  at: string;
  provider: string;
  nodes: NodeView[];
  tokend: TokendView;
  virtualClusters: { source: string; clusters: VirtualClusterView[] };
  loans: { source: string; loans: LoanView[] };
}

const ms = (ns: number) => Math.round(ns / 1e4) / 100;
const round = (x: number, digits = 4) => Math.round(x * 10 ** digits) / 10 ** digits;

/** tokend's STATS as rows; `stats` undefined with `error` when it did not answer, with `source` alone when it does not run. */
export function tokendView(source: string, stats?: TokendStats, error?: string): TokendView {
  if (!stats) return { source, available: false, ...(error ? { error } : {}), clients: [], rckm: [] };
  const clients = (stats.clients ?? []).map((c): TokendClientRow => ({
    id: Number(c.id),
    pid: Number(c.pid),
    device: String(c.device),
    slo: !!c.slo,
    request: round(Number(c.request)),
    limit: round(Number(c.limit)),
    smShare: round(Number(c.smShare ?? 1)),
    state: c.state ?? 'NONE',
    lastGrantMs: ms(Number(c.lastGrantNs ?? 0)),
    grantedMs: ms(Number(c.grantedNs ?? 0)),
    usedMs: ms(Number(c.usedNs ?? 0)),
    usedOfGranted: Number(c.grantedNs) > 0 ? round(Number(c.usedNs) / Number(c.grantedNs)) : 0,
    launches: Number(c.launches ?? 0),
    cgroup: String(c.cgroup ?? ''),
  })).sort((a, b) => a.device.localeCompare(b.device) || a.id - b.id);
  return {
    source,
    available: true,
    policy: stats.policy ?? 'default',
    windowMs: ms(stats.windowNs),
    windowSeq: stats.windowSeq,
    clients,
    rckm: (stats.rckm ?? []).map((r) => ({ device: r.device, c: round(r.c), low: round(r.low), cycles: r.cycles })),
  };
}

/** The virtual clusters (by `mlfaas.io/vc`) and the loans (home inference, now training) of a cluster's nodes. */
export function clusterViews(facts: readonly ClusterNodeFacts[], source: string): Pick<NodesAnswer, 'virtualClusters' | 'loans'> {
  const byVc = new Map<string, string[]>();
  for (const n of facts) if (n.vc) byVc.set(n.vc, [...(byVc.get(n.vc) ?? []), n.name]);
  const clusters = [...byVc.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([name, nodes]) => ({ name, nodes: nodes.sort() }));
  const loans = facts.filter((n) => n.homeVc && n.vc && n.homeVc !== n.vc)
    .map((n) => ({ node: n.name, from: n.homeVc!, to: n.vc!, moving: n.unschedulable }))
    .sort((a, b) => a.node.localeCompare(b.node));
  const none = facts.length === 0 ? `${source}: no node carries the mlfaas.io/vc label` : source;
  return {
    virtualClusters: { source: clusters.length ? source : none, clusters },
    loans: { source: facts.some((n) => n.homeVc) ? source : `${source}: no node is labelled mlfaas.io/home-vc (nothing can be loaned)`, loans },
  };
}

/** The nodes of a cluster as views (every node shares the provider's enforcement). */
export function clusterNodes(facts: readonly ClusterNodeFacts[], enforcement: Enforcement): NodeView[] {
  return [...facts].sort((a, b) => a.name.localeCompare(b.name)).map((n) => ({
    name: n.name,
    devices: { cpuCores: n.cpuCores, gpus: Array.from({ length: n.gpus }, (_, index) => ({ index, name: 'nvidia.com/gpu' })) },
    enforcement,
    ...(n.vc ? { virtualCluster: n.vc } : {}),
    ...(n.homeVc ? { homeCluster: n.homeVc } : {}),
    unschedulable: n.unschedulable,
  }));
}

/** Neither virtual clusters nor loans, and why. */
export function noClusters(why: string): Pick<NodesAnswer, 'virtualClusters' | 'loans'> {
  return { virtualClusters: { source: why, clusters: [] }, loans: { source: why, loans: [] } };
}
