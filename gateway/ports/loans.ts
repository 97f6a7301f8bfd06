/**
 * Node loans between the inference and the training virtual cluster, as the Kubernetes provider's
 * manager (`providers/kubernetes/vc-manager.ts`) calls them: a port defined on the gateway side,
 * implemented by the autoscaler's FaPES-Manager (`manageLoans`, injected at the
 * composition root). Pure: the caller passes the demand and which jobs run on which server.
 */

export interface ManagerConfig {
  /** Server ids of the inference VC (they may be loaned out). */
  readonly inferenceServers: readonly number[];
  /** False = dedicated partition: nothing is ever loaned (the paper's baseline (1)). */
  readonly loaning: boolean;
}

export interface ManagerDecision {
  /** Inference servers on loan to training after this round, ascending. */
  readonly loaned: number[];
  /** Servers newly loaned this round. */
  readonly loan: number[];
  /** Servers reclaimed this round (in the heuristic's order). */
  readonly reclaim: number[];
  /** Training jobs preempted by the reclaims. */
  readonly preempted: string[];
  readonly reason: string;
}

/**
 * One round of the manager. `demand` = inference servers needed now (clamped to the VC's size);
 * `loaned` = servers on loan before this round; `jobsOn(server)` = training jobs with workers there.
 */
export type LoanPolicy = (cfg: ManagerConfig, loaned: readonly number[], demand: number, jobsOn: (server: number) => readonly string[]) => ManagerDecision;
