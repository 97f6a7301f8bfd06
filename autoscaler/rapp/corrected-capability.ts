import type { Capability } from '../inference/types';
import { LogFactor, quantise } from './online-correction';

/**
 * The capability the live policy queries: the deploy-time profile times the function's online
 * correction factor k (online-correction.ts): capability × k, latency ÷ k. `profileKey` changes whenever
 * the profile or the (quantised) factor does, so policies that cache per key see the new surface.
 */
export class CorrectedCapability implements Capability {
  private readonly factors = new Map<string, { k: number; base: object | undefined; token: object }>();

  constructor(readonly base: Capability) {}

  /** Sets fn's correction (ln k). */
  setFactor(fn: string, logK: LogFactor): void {
    const k = quantise(logK);
    const cur = this.factors.get(fn);
    const base = this.base.profileKey?.(fn);
    if (!cur || cur.k !== k || cur.base !== base) this.factors.set(fn, { k, base, token: {} });
  }

  factor(fn: string): number {
    return this.factors.get(fn)?.k ?? 1;
  }

  forget(fn: string): void {
    this.factors.delete(fn);
  }

  capability(fn: string, batch: number, smShare: number, quota: number): number {
    return this.base.capability(fn, batch, smShare, quota) * this.factor(fn);
  }

  latencyMs(fn: string, batch: number, smShare: number, quota: number): number {
    return this.base.latencyMs(fn, batch, smShare, quota) / this.factor(fn);
  }

  grid(fn: string): { batches: number[]; smShares: number[]; quotas: number[] } {
    return this.base.grid(fn);
  }

  profileKey(fn: string): object | undefined {
    const base = this.base.profileKey?.(fn);
    const f = this.factors.get(fn);
    if (!f || f.k === 1) return base;
    if (f.base !== base) this.setFactor(fn, Math.log(f.k));
    return this.factors.get(fn)!.token;
  }
}
