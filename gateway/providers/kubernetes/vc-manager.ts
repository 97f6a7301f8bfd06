/**
 * FaPES-Manager on a cluster (§3.3–3.4): the inference virtual cluster's own nodes (labelled
 * `mlfaas.io/home-vc=inference`) are loaned to training while inference leaves them idle and
 * reclaimed when it needs them, one whole node at a time, with the reclaim cost/gain heuristic
 * (a `LoanPolicy`, pure: FaPES-Manager's, injected). Each round (the training round loop's, in the autoscaler process):
 * inference's demand in nodes is what its function pods request (every replica the autoscaler
 * wants, Pending ones included) over one node's allocatable; the decision is applied by
 * `moveNode` (cordon, evict the other cluster's pods, relabel `mlfaas.io/vc`, uncordon). A
 * reclaimed node's training pods are evicted: their jobs checkpoint in the grace period and the
 * next training round places them on the training nodes left.
 */
import type { CoreV1Api, V1Node, V1Pod } from '@kubernetes/client-node';
import type { LoanPolicy, ManagerDecision } from '../../ports/loans';
import { cpuCores } from '../../../node-runtime/cgroups';
import { FN_LABEL, VC_LABEL } from './manifests';
import { JOB_LABEL } from './training-pods';
import { moveNode, type MoveReport } from './virtual-clusters';

/** The cluster a node belongs to when nothing is loaned. */
export const HOME_VC_LABEL = 'mlfaas.io/home-vc';

const live = (p: V1Pod) => p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed' && !p.metadata?.deletionTimestamp;

/**
 * Nodes inference needs now: its function pods' CPU (and GPU) requests over the smallest home
 * node's allocatable, whichever is larger, at least 1 while any function pod is wanted. Pure.
 */
export function inferenceDemand(pods: readonly V1Pod[], homeNodes: readonly V1Node[]): number {
  const fnPods = pods.filter((p) => p.metadata?.labels?.[FN_LABEL] && live(p));
  if (fnPods.length === 0 || homeNodes.length === 0) return 0;
  let cpu = 0;
  let gpu = 0;
  for (const p of fnPods) {
    for (const c of p.spec?.containers ?? []) {
      cpu += cpuCores(String(c.resources?.requests?.cpu ?? c.resources?.limits?.cpu ?? '0'));
      gpu += Number(c.resources?.limits?.['nvidia.com/gpu'] ?? 0);
    }
  }
  const perCpu = Math.min(...homeNodes.map((n) => cpuCores(String(n.status?.allocatable?.cpu ?? '0'))));
  const perGpu = Math.min(...homeNodes.map((n) => Number(n.status?.allocatable?.['nvidia.com/gpu'] ?? 0)));
  const byCpu = perCpu > 0 ? Math.ceil(cpu / perCpu - 1e-9) : 0;
  const byGpu = perGpu > 0 ? Math.ceil(gpu / perGpu - 1e-9) : 0;
  return Math.min(homeNodes.length, Math.max(1, byCpu, byGpu));
}

export interface VcRound {
  decision: ManagerDecision;
  demand: number;
  moves: MoveReport[];
}

/** One manager round against the API: read, decide (pure), move. */
export async function manageVirtualClusters(core: CoreV1Api, manageLoans: LoanPolicy, loaning = true): Promise<VcRound | undefined> {
  const fnPods = (await core.listPodForAllNamespaces({ labelSelector: FN_LABEL })).items.filter(live);
  const replicasOn = (n: V1Node) => fnPods.filter((p) => p.spec?.nodeName === n.metadata!.name).length;
  // the manager loans from the front: nodes with the fewest replicas first (an idle one evicts none), then by name
  const home = (await core.listNode({ labelSelector: `${HOME_VC_LABEL}=inference` })).items.sort((a, b) => replicasOn(a) - replicasOn(b) ||
    a.metadata!.name!.localeCompare(b.metadata!.name!));
  if (home.length === 0) return undefined;
  const names = home.map((n) => n.metadata!.name!);
  const loaned = home.flatMap((n, i) => (n.metadata?.labels?.[VC_LABEL] === 'training' ? [i] : []));
  const jobPods = (await core.listPodForAllNamespaces({ labelSelector: JOB_LABEL })).items.filter(live);
  const demand = inferenceDemand(fnPods, home);
  const jobsOn = (s: number) => [...new Set(jobPods.filter((p) => p.spec?.nodeName === names[s]).map((p) => p.metadata!.labels![JOB_LABEL]))];
  const decision = manageLoans({ inferenceServers: names.map((_, i) => i), loaning }, loaned, demand, jobsOn);
  const moves: MoveReport[] = [];
  for (const s of decision.reclaim) moves.push(await moveNode(core, names[s], 'inference'));
  for (const s of decision.loan) moves.push(await moveNode(core, names[s], 'training'));
  return { decision, demand, moves };
}
