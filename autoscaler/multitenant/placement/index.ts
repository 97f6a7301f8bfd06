import { makeCluster } from '../../reproductions/dilu/cluster';
import type { SchedPolicy } from '../../sim/dilu-sched/simulator';
import { CONSOLIDATE_DEFAULTS, planDrains, type ConsolidateParams } from './consolidate';
import { OURS_BOUNDS, placeOurs, scarcity, type OursParams } from './online';

export { placeOurs, scarcity, leftover, bestFit, OURS_BOUNDS, type OursParams } from './online';
export { planDrains, CONSOLIDATE_DEFAULTS, type ConsolidateParams } from './consolidate';

export interface OursOptions {
  readonly params?: Partial<OursParams>;
  /** Consolidation settings; null = online placement only (no moves). */
  readonly consolidate?: Partial<ConsolidateParams> | null;
}

/** Our placement as a scheduling-simulator policy: online best fit plus consolidation by moves. */
export function makeOursPolicy(o: OursOptions = {}): SchedPolicy {
  const p: OursParams = { ...OURS_BOUNDS, ...o.params };
  const cp = o.consolidate === null ? null : { ...CONSOLIDATE_DEFAULTS, ...o.consolidate };
  const draining = new Set<number>();
  // Consolidation runs only after something freed capacity (a delete or a finished move): instances
  // placed since the last call plus moves booked then, against what is placed now.
  let expected = 0;
  let placedSince = 0;
  return {
    name: cp ? 'ours' : 'ours-online',
    cluster: makeCluster(),
    place: (c, inst) => {
      const pl = placeOurs(c, inst, p, draining);
      if (pl) placedSince++;
      return pl;
    },
    rebalance: cp
      ? (c, _now, moving) => {
          const freed = c.placed.size < expected + placedSince;
          placedSince = 0;
          const moves = freed ? planDrains(c, p, cp, scarcity(c, p.memWeight), draining, moving) : [];
          expected = c.placed.size + moves.length;
          return moves;
        }
      : undefined,
  };
}
