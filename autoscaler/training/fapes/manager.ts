/**
 * FaPES-Manager (§3.3–3.4): servers move between the inference and the training virtual cluster
 * one whole server at a time. Each round, inference servers left idle by the inference demand are
 * loaned to training; when inference needs more servers than it has, loaned servers are reclaimed
 * with the reclaim cost/gain heuristic (`chooseServersToReclaim`, Fig. 6), preempting as few
 * training jobs as possible. Pure: the caller passes the demand and which jobs run on which server.
 *
 * Inference scaling inside its own VC (jobs scaled up to max_scale before a loan, down to
 * min_scale before a reclaim, Fig. 5) is folded into `demand`: the servers inference needs now.
 */
import type { ManagerConfig, ManagerDecision } from '../../../gateway/ports/loans';
import { chooseServersToReclaim } from './reclaim';

export type { ManagerConfig, ManagerDecision };

/**
 * One round of the manager (the Kubernetes provider's `LoanPolicy` port,
 * `gateway/ports/loans.ts`). `demand` = inference servers needed now (clamped to the VC's size);
 * `loaned` = servers on loan before this round; `jobsOn(server)` = training jobs with workers there.
 */
export function manageLoans(
  cfg: ManagerConfig,
  loaned: readonly number[],
  demand: number,
  jobsOn: (server: number) => readonly string[],
): ManagerDecision {
  const n = cfg.inferenceServers.length;
  const idle = cfg.loaning ? Math.max(0, n - Math.max(0, Math.ceil(demand))) : 0;
  const onLoan = new Set(loaned);
  if (idle > onLoan.size) {
    const loan = cfg.inferenceServers.filter((s) => !onLoan.has(s)).slice(0, idle - onLoan.size);
    loan.forEach((s) => onLoan.add(s));
    return { loaned: [...onLoan].sort((a, b) => a - b), loan, reclaim: [], preempted: [], reason: `loan ${loan.length} idle inference server(s)` };
  }
  if (idle < onLoan.size) {
    const nr = onLoan.size - idle;
    const choice = chooseServersToReclaim(
      [...onLoan].map((s) => ({ id: String(s), jobs: [...jobsOn(s)] })),
      nr,
    );
    const reclaim = choice.servers.map(Number);
    reclaim.forEach((s) => onLoan.delete(s));
    return { loaned: [...onLoan].sort((a, b) => a - b), loan: [], reclaim, preempted: choice.preempted,
      reason: `inference needs ${nr} more: ${choice.reason}` };
  }
  return { loaned: [...onLoan].sort((a, b) => a - b), loan: [], reclaim: [], preempted: [], reason: 'no change' };
}

/**
 * Inference servers needed per minute from a per-minute load series: the VC is sized for the peak
 * (N_r^max servers at the series' maximum) and needs ceil(N_r^max · load / peak) servers.
 */
export function serversFromLoad(load: readonly number[], maxServers: number): number[] {
  const peak = Math.max(1e-9, ...load);
  return load.map((x) => Math.min(maxServers, Math.max(0, Math.ceil((maxServers * Math.max(0, x)) / peak - 1e-9))));
}
