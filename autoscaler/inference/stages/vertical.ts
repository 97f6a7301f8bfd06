/** Vertical scale-up stages: more time quota for the replicas running, most SMs first, in steps of ΔI_q. */
import { EPS, r6 } from '../hybrid-params';
import type { FleetQueueModel, PerReplicaModel } from './slo-model';
import type { StageDeps, VerticalStage } from './types';

/**
 * Per-replica models (Algorithm 1): each replica's quota rises within its slot's free quota until
 * the gap d.dR is covered; what it adds is taken off the gap.
 */
export function quotaUpByGap({ p }: StageDeps, model: PerReplicaModel): VerticalStage {
  return {
    up(d) {
      const { ctx, overlay, notes, quotas } = d;
      const order = [...d.replicas].sort((a, b) => b.smShare - a.smShare);
      for (const x of order) {
        if (d.dR <= 0) break;
        const aq = overlay.maxQuotaFor(x.id, x.gpu);
        const base = model.capOf(ctx, x.batchSize, x.smShare, x.quota);
        let newQ = x.quota;
        let dC = 0;
        for (let n = 1; r6(x.quota + n * p.quotaStep) <= aq + EPS && d.dR - dC > 0; n++) {
          newQ = r6(x.quota + n * p.quotaStep);
          dC = model.capOf(ctx, x.batchSize, x.smShare, newQ) - base;
        }
        if (newQ !== x.quota) {
          notes.push(`quota ${x.id} ${x.quota}→${newQ}`);
          overlay.setQuota(x.id, x.gpu, newQ);
          x.quota = newQ;
          quotas.set(x.id, newQ);
          d.dR -= dC;
        }
      }
    },
  };
}

/** sloModel 'shared': quotas rise, one step at a time, until the fleet as one queue fits R/α. */
export function quotaUpUntilFits({ p }: StageDeps, model: FleetQueueModel): VerticalStage {
  const { fits, fleetOf } = model.fleet;
  return {
    up(d) {
      const { ctx, overlay, notes, quotas, fleet } = d;
      const T = d.R / p.alpha;
      const order = [...d.replicas].sort((a, b) => b.smShare - a.smShare);
      for (const x of order) {
        if (fits(ctx, fleetOf(ctx, fleet), T)) break;
        const aq = overlay.maxQuotaFor(x.id, x.gpu);
        const before = x.quota;
        for (let n = 1; r6(before + n * p.quotaStep) <= aq + EPS; n++) {
          x.quota = r6(before + n * p.quotaStep);
          if (fits(ctx, fleetOf(ctx, fleet), T)) break;
        }
        if (x.quota !== before) {
          notes.push(`quota ${x.id} ${before}→${x.quota}`);
          overlay.setQuota(x.id, x.gpu, x.quota);
          quotas.set(x.id, x.quota);
        }
      }
    },
  };
}
