/**
 * Interference between replicas that share one GPU (issue 11). SM partitions (MPS) and time quotas
 * (the token limiter) divide compute, but co-located replicas still contend for memory bandwidth,
 * L2 and the copy engines, so a batch runs slower while its device neighbours are busy.
 *
 * The figure: Dilu (ASPLOS'25, Sec. 6.2, Fig. 7) measures an inference replica collocated with a
 * training replica that uses the rest of the device at 1.24× its exclusive p50 latency (1.28× p95),
 * and reports inference-inference collocation "almost aligned" with it (Fig. 8a). We read that as a
 * slowdown of 1 + β·u with β = 0.24, u the fraction of the device the neighbours keep busy (u = 1:
 * the rest of the device busy, Dilu's setup). Linear in u is our assumption; the Dilu MPS profiles
 * in ../shared/data/latency/dilu_mps are single-function and cannot calibrate it.
 *
 * Pure: the simulator charges `slowdown` with the neighbours actually busy when a batch starts
 * (autoscaler/sim/engine.ts); policies plan with `plannedSlowdown`, the worst case their placement
 * allows (the rest of the device busy), through `InterferenceAwareCapability`.
 */
import type { Capability } from './types';

/** Dilu's collocated p50 ÷ exclusive p50 − 1 (Fig. 7, training-inference, averaged over its models). */
export const DILU_INTERFERENCE_BETA = 0.24;

/** Slowdown of a batch whose device neighbours keep `busyShare` (Σ smShare·quota, busy ones) of the device busy. */
export function slowdown(beta: number, busyShare: number): number {
  return 1 + beta * Math.min(1, Math.max(0, busyShare));
}

/** What a policy plans with for a replica holding smShare·quota of a device: the rest of it busy. */
export function plannedSlowdown(beta: number, smShare: number, quota: number): number {
  return slowdown(beta, 1 - smShare * quota);
}

/**
 * A capability as a policy should plan with it on a shared GPU: the profile's latency × the planned
 * slowdown (a replica holding the whole device, s·q = 1, has no neighbours and no slowdown).
 */
export class InterferenceAwareCapability implements Capability {
  private readonly keys = new WeakMap<object, object>();

  constructor(
    readonly base: Capability,
    readonly beta: number = DILU_INTERFERENCE_BETA,
  ) {}

  latencyMs(fn: string, batch: number, smShare: number, quota: number): number {
    return this.base.latencyMs(fn, batch, smShare, quota) * plannedSlowdown(this.beta, smShare, quota);
  }

  capability(fn: string, batch: number, smShare: number, quota: number): number {
    const l = this.latencyMs(fn, batch, smShare, quota);
    return l < Infinity && l > 0 ? (batch * 1000) / l : 0;
  }

  grid(fn: string): { batches: number[]; smShares: number[]; quotas: number[] } {
    return this.base.grid(fn);
  }

  /** A token of its own per base token, so caches keyed by the base's token never mix the two surfaces. */
  profileKey(fn: string): object | undefined {
    const k = this.base.profileKey?.(fn);
    if (k === undefined) return undefined;
    let mine = this.keys.get(k);
    if (!mine) this.keys.set(k, (mine = {}));
    return mine;
  }
}
