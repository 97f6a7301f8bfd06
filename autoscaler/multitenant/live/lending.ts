/**
 * Lending in the fixed-cluster mode (issue 24), pure: with it on, every replica's quota is its
 * REQUEST (cgroup cpu.shares ∝ quota, guaranteed while Σ replicas × quota ≤ capacity) and its
 * LIMIT is one whole CPU (1 core; units.ts turns it into the provider's fraction of the replica's
 * cores), so a busy replica borrows what idle neighbours leave: the work-conserving shares the
 * simulator models (autoscaler/sim/faro/shares.ts, `cpu: 'shares'`). With it off, request = limit.
 */
import { providerLimit, providerQuota, providerWords } from './units';

/** The limit a replica of the lending cluster gets, cores: one whole CPU. */
export const LENT_LIMIT = 1;

/**
 * Whether the cluster lends (`MLFAAS_CLUSTER_LENDING`; unset: on for the `mlfaas` controller,
 * whose model is work-conserving shares, off for `grid` and any other, whose models assume hard caps).
 */
export function clusterLending(controller: string, setting?: boolean): boolean {
  return setting ?? controller === 'mlfaas';
}

/** The limit, cores, to give with a quota: LENT_LIMIT when lending, else undefined (request = limit). */
export function limitOf(lending: boolean): number | undefined {
  return lending ? LENT_LIMIT : undefined;
}

/**
 * A replica's request and limit in words, for events, in cores (`cores`: the replica's, whose
 * fraction the provider is given, named where it is not 1):
 * `quota 0.6 core (limit 1 core: borrows idle CPU; the provider's 0.3/0.5 of each of its 2 cores)`.
 */
export function quotaWords(quota: number, limit: number | undefined, cores = 1): string {
  const l = limit ?? quota;
  const how = l > quota + 1e-9 ? 'borrows idle CPU' : 'request = limit, nothing lent';
  return `quota ${quota} core (limit ${l} core: ${how}${providerWords(quota, limit, cores)})`;
}

/**
 * Whether a replica whose quota stays needs its limit set again: `known` is the provider limit the
 * runner set last or the provider reports (undefined: unknown), for a quota of `quota` cores with a
 * limit of `limit` cores (undefined: request = limit) on a replica of `cores` cores. Unknown: set
 * once when lending (the provider may hold request = limit from before); without lending, an
 * unknown limit is left alone.
 */
export function limitStale(known: number | undefined, quota: number, limit: number | undefined, cores = 1): boolean {
  if (known === undefined) return limit !== undefined;
  const want = providerLimit(limit, quota, cores) ?? providerQuota(quota, cores);
  return Math.abs(known - want) > 1e-9;
}
