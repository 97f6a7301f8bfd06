/**
 * The static-share baseline's one free parameter, tuned on the tuning set (HAS-GPU suite, both
 * workloads, SLO 1.5/2/2.5×, seed 42): FaST-GShare's profiler picks the most throughput per
 * resource whose batch-1 latency is at most `headroom` × the SLO. Returns violations and cost per
 * headroom, and KPA's cost on the same set. The rule, fixed before the sweep was run: the
 * baseline's default is the headroom with the fewest violations among those that cost no more
 * than KPA (exclusive GPUs), i.e. the baseline at its best on the headline's metric.
 * `npx tsx bench/inference/tune-static.ts` prints the sweep.
 */
import { join } from 'node:path';
import { simulate } from '../../autoscaler/sim/engine';
import { buildFunctions } from '../../autoscaler/sim/setup';
import { readTrace } from '../../autoscaler/sim/traces';

export const HEADROOMS = [1, 0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1];
const MODELS = ['resnet50', 'convnext_tiny', 'mobilenet_v3_large', 'shufflenet_v2_x1_0', 'resnet152'];

export interface TuneRow {
  readonly headroom: number;
  readonly violationRate: number;
  readonly cost: number;
}

function runSet(dataDir: string, policy: string, params: Record<string, number>): { v: number; n: number; cost: number } {
  let v = 0;
  let n = 0;
  let cost = 0;
  for (const w of ['rps', 'stress'])
    for (const m of MODELS)
      for (const slo of [1.5, 2, 2.5]) {
        const trace = readTrace(join(dataDir, 'traces', `hasgpu_workloads/${w}.json`));
        const { fns, capability } = buildFunctions(trace, { dataDir, models: [m], sloMult: slo });
        const r = simulate(fns, { policy, params, capability, coldStartS: 20, seed: 42 });
        v += r.violations;
        n += r.requests;
        cost += r.cost;
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
