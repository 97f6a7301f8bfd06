/**
 * The static-share baseline's one free parameter, tuned on the tuning set (HAS-GPU suite, both
 * workloads, each workload's 15 functions (5 models × SLO 1.5/2/2.5×) on one cluster, seed 42,
 * with the bench's interference and profile noise, cost per device): FaST-GShare's profiler picks the most throughput per
 * resource whose batch-1 latency is at most `headroom` × the SLO. Returns violations and cost per
 * headroom, and KPA's cost on the same set. The rule, fixed before the sweep was run: the
 * baseline's default is the headroom with the fewest violations among those that cost no more
 * than KPA (exclusive GPUs), i.e. the baseline at its best on the headline's metric.
 * `npx tsx bench/inference/tune-static.ts` prints the sweep.
 */
import { simulate } from '../../autoscaler/sim/engine';
import { hasGpuParts, MECHANISM, setUpCluster } from './run';

export const HEADROOMS = [1, 0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1];

export interface TuneRow {
  readonly headroom: number;
  readonly violationRate: number;
  readonly cost: number;
}

function runSet(dataDir: string, policy: string, params: Record<string, number>): { v: number; n: number; cost: number } {
  let v = 0;
  let n = 0;
  let cost = 0;
  for (const w of ['rps', 'stress'] as const) {
    const { fns, capability, told, beta } = setUpCluster(hasGpuParts(dataDir, w), dataDir, { seed: 42 });
    const r = simulate(fns, { policy, params, capability, told, interferenceBeta: beta, coldStartS: 20, seed: 42, ...MECHANISM });
    v += r.violations;
    n += r.requests;
    cost += r.deviceCost;
  }
  return { v, n, cost };
}

/** The tuning rule: fewest violations among the headrooms that cost no more than KPA. */
export function chooseHeadroom(rows: readonly TuneRow[], kpaCost: number): number | undefined {
  const ok = rows.filter((r) => r.cost <= kpaCost);
  return ok.length ? ok.reduce((b, r) => (r.violationRate < b.violationRate ? r : b)).headroom : undefined;
}

export function tuneStatic(dataDir: string): { rows: TuneRow[]; kpaCost: number; chosen?: number } {
  const rows: TuneRow[] = [];
  const kpa = runSet(dataDir, 'kpa', { maxReplicas: 2 });
  for (const headroom of HEADROOMS) {
    const { v, n, cost } = runSet(dataDir, 'static-share', { headroom });
    rows.push({ headroom, violationRate: v / Math.max(1, n), cost });
  }
  return { rows, kpaCost: kpa.cost, chosen: chooseHeadroom(rows, kpa.cost) };
}

if (require.main === module) {
  const t = tuneStatic(process.env.MLFAAS_DATA_DIR ?? '/work/shared/data');
  for (const r of t.rows) console.log(`headroom ${r.headroom}: violations ${(100 * r.violationRate).toFixed(2)} % cost $${r.cost.toFixed(4)}`);
  console.log(`kpa cost $${t.kpaCost.toFixed(4)}; chosen headroom ${t.chosen}`);
}
