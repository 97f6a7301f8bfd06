/**
 * The fixed-cluster runner's units (issue 24), pure. The controllers and the runner count a
 * replica's quota in CORES (Σ replicas × quota ≤ the cluster's cores). A provider reads
 * `setQuota(ref, id, quota, limit)` as a fraction of EACH of the replica's cores: locally CFS quota
 * = quota × the cores of its cpuset (all the node's cores while unplaced), on Kubernetes
 * requests/limits = quota/limit × the pod's declared cores. `ReplicaInfo.cores` says how many
 * (absent: 1). The runner converts here, at the edge, both ways.
 */
import type { ReplicaInfo } from '../../../gateway/registry/registry';

/** The cores a replica's provider quota is a fraction of: `cores` when a positive number, else 1. */
export function coresOf(r: Pick<ReplicaInfo, 'cores'>): number {
  const c = r.cores;
  return typeof c === 'number' && Number.isFinite(c) && c > 0 ? c : 1;
}

/** A quota in cores → the provider's fraction of each of `cores` cores, in (0, 1]. */
export function providerQuota(coreQuota: number, cores: number): number {
  return Math.min(1, coreQuota / cores);
}

/**
 * The provider limit for a limit of `limitCores` cores (lending: one whole CPU, what the simulator
 * models) on a replica of `cores` cores, never below its provider quota; undefined without one
 * (request = limit).
 */
export function providerLimit(limitCores: number | undefined, coreQuota: number, cores: number): number | undefined {
  if (limitCores === undefined) return undefined;
  return Math.max(providerQuota(coreQuota, cores), Math.min(1, limitCores / cores));
}

/** A provider fraction of each of `cores` cores → cores (to 1e-9: 0.22333…/3 cores reads back as 0.67, not 0.6699…). */
export function toCores(providerFraction: number, cores: number): number {
  return Math.round(providerFraction * cores * 1e9) / 1e9;
}

/** What a replica of `cores` cores holds when given `coreQuota` cores: at most its cores (a 0.5-core pod holds 0.5 of 0.67). */
export function heldCores(coreQuota: number, cores: number): number {
  return toCores(providerQuota(coreQuota, cores), cores);
}

/** A replica's quota as the provider reports it, in cores. */
export function coreQuotaOf(r: Pick<ReplicaInfo, 'quota' | 'cores'>): number {
  return toCores(r.quota, coresOf(r));
}

/**
 * The provider's numbers for a replica of `cores` cores, said only where they differ from the cores:
 * quota 0.6 core, limit 1 core, 2 cores → `; the provider's 0.3/0.5 of each of its 2 cores`.
 */
export function providerWords(coreQuota: number, limitCores: number | undefined, cores: number): string {
  if (Math.abs(cores - 1) <= 1e-9) return '';
  const q = providerQuota(coreQuota, cores);
  const l = providerLimit(limitCores, coreQuota, cores) ?? q;
  const n = (x: number) => String(Number(x.toFixed(4)));
  return `; the provider's ${n(q)}/${n(l)} of each of its ${n(cores)} cores`;
}
