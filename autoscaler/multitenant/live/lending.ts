/**
 * Lending in the fixed-cluster mode (issue 24), pure: with it on, every replica's quota is its
 * REQUEST (cgroup cpu.shares ∝ quota, guaranteed while Σ replicas × quota ≤ capacity) and its
 * LIMIT is one whole replica's CPU (limit 1 in the provider's units), so a busy replica borrows
 * what idle neighbours leave: the work-conserving shares the simulator models
 * (autoscaler/sim/faro/shares.ts, `cpu: 'shares'`). With it off, request = limit (hard caps).
 */

/** The limit a replica of the lending cluster gets: one whole replica's CPU. */
export const LENT_LIMIT = 1;

/**
 * Whether the cluster lends (`MLFAAS_CLUSTER_LENDING`; unset: on for the `mlfaas` controller,
 * whose model is work-conserving shares, off for `grid` and any other, whose models assume hard caps).
 */
export function clusterLending(controller: string, setting?: boolean): boolean {
  return setting ?? controller === 'mlfaas';
}

/** The limit to pass with `quota`: LENT_LIMIT when lending, else undefined (request = limit). */
export function limitOf(lending: boolean): number | undefined {
  return lending ? LENT_LIMIT : undefined;
}

/** A replica's request and limit in words, for events: `quota 0.6 (limit 1: borrows idle CPU)`. */
export function quotaWords(quota: number, limit: number | undefined): string {
  const l = limit ?? quota;
  return l > quota + 1e-9 ? `quota ${quota} (limit ${l}: borrows idle CPU)` : `quota ${quota} (limit ${l}: request = limit, nothing lent)`;
}

/**
 * Whether a replica whose quota stays needs its limit set again: `known` is what the runner set
 * last or the provider reports (undefined: unknown). Unknown: set once when lending (the provider
 * may hold request = limit from before); with lending off, an unknown limit is left alone.
 */
export function limitStale(known: number | undefined, quota: number, lending: boolean): boolean {
  const want = limitOf(lending) ?? quota;
  if (known === undefined) return lending;
  return Math.abs(known - want) > 1e-9;
}
