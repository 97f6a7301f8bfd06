/**
 * SLO model stages: a replica's (or the fleet's) capability within the SLO. 'mdc', 'budget' and
 * 'none' count replicas one by one (their capabilities add up); 'shared' models the function's
 * replicas as one queue (hybrid-fleet.ts). The tables behind them are hybrid-tables.ts.
 */
import { makeFleet, Member } from '../hybrid-fleet';
import { makeTables } from '../hybrid-tables';
import type { SloModelStage, StageDeps } from './types';

/** Per-replica models (sloModel mdc | budget | none): the fleet's capability is the sum of its replicas'. */
export function perReplicaModel({ p, cap, quotaLevels }: StageDeps): SloModelStage & { tables: ReturnType<typeof makeTables> } {
  const tables = makeTables(p, cap, quotaLevels, false);
  return {
    name: p.sloModel,
    tables,
    ctxOf: tables.ctxOf,
    capOf: tables.capOf,
    capacity(ctx, members) {
      let c = 0;
      for (const m of members) c += tables.capOf(ctx, m.batchSize, m.smShare, m.quota);
      return c;
    },
  };
}

/** sloModel 'shared': the replicas as one queue; capability is the largest rate the fleet serves within the SLO. */
export function fleetQueueModel({ p, cap, quotaLevels }: StageDeps) {
  const tables = makeTables(p, cap, quotaLevels, true);
  const fleet = makeFleet(p, cap, quotaLevels, true, tables);
  const model = {
    name: 'shared',
    tables,
    fleet,
    ctxOf: tables.ctxOf,
    capOf: tables.capOf,
    capacity: (ctx, members: readonly Member[]) => fleet.fleetCap(ctx, fleet.fleetOf(ctx, members as Member[])),
  } satisfies SloModelStage & Record<string, unknown>;
  return model;
}

export type PerReplicaModel = ReturnType<typeof perReplicaModel>;
export type FleetQueueModel = ReturnType<typeof fleetQueueModel>;
