import type { ClusterController } from '../../autoscaler/multitenant/types';
import { simulateFaro, type FaroMetrics } from '../../autoscaler/sim/faro';
import { authorsFigure, type AuthorsFigure } from './faro-authors';
import { faroPolicy, type PredictorName } from './faro-policies';
import { registerPredictivePolicies } from './faro-predictive';
import { formatFaroTable } from './faro-table';

/** The policies of the table, in its order. */
export const FARO_TABLE_POLICIES = ['Faro-FairSum', 'Faro-Sum', 'MArk/Cocktail/Barista', 'AIAD', 'FairShare', 'Oneshot'];

export interface ExtraPolicy {
  readonly name: string;
  make(R: number, seed: number): ClusterController;
  /** Replicas per job at t = 0 (default 1). */
  readonly initialReplicas?: number;
  /** Options for the simulator, e.g. `{ acceptRateOnlyWithReplicaChange: false }`. */
  readonly simConfig?: Parameters<typeof simulateFaro>[0]['config'];
}

export interface FaroComparisonOptions {
  readonly seeds: readonly number[];
  readonly sizes: readonly number[];
  readonly policies?: readonly string[];
  readonly extra?: readonly ExtraPolicy[];
  /** Forecasters for the predictive policies (default both rerun stand-ins). */
  readonly predictors?: readonly PredictorName[];
  /** Seeds for the oracle forecaster (default `seeds`; e.g. [42] to run it only where the authors have a rerun figure). */
  readonly oracleSeeds?: readonly number[];
  /** The seed compared with the authors' rerun (42). */
  readonly rerunSeed?: number;
  readonly log?: (line: string) => void;
}

export interface SeedStats {
  readonly n: number;
  readonly lostMean: number;
  /** Half-width of the 95 % t-interval (0 with one seed). */
  readonly lostCi: number;
  readonly violationMean: number;
  readonly violationCi: number;
}

export interface FaroRow {
  readonly size: number;
  readonly policy: string;
  readonly predictive: boolean;
  /** Per predictor ('none' for the policies that use none): the rerun seed's metrics and the seed statistics. */
  readonly ours: Partial<Record<PredictorName | 'none', { rerunSeed?: FaroMetrics; seeds: SeedStats }>>;
  readonly authors?: AuthorsFigure;
  /** |ours − rerun| / rerun on the rerun seed, worst over predictors; undefined without a rerun figure. */
  readonly errorRerunSeed?: number;
  /** The same with our mean over the seeds in place of our rerun-seed run. */
  readonly errorSeedMean?: number;
  /**
   * Whether each rerun figure lies in the 95 % prediction interval of one more of our seeds (mean ± t·sd·√(1 + 1/n)): the
   * statistical-equivalence check (from when our streams were not numpy's; with the same streams, the rerun-seed error is the
   * direct check). Undefined without a rerun figure or with one seed.
   */
  readonly rerunInPrediction?: boolean;
  /** |our seed mean − stored| / stored, for the policies without a forecaster (the stored runs' N-HiTS is not ours). */
  readonly errorStored?: number;
}

export interface FaroComparison {
  readonly markdown: string;
  readonly rows: FaroRow[];
  /** Worst errorRerunSeed over the rows (ours seed 42 vs the authors' seed-42 rerun). */
  readonly fidelityMaxError: number;
  /** Worst errorSeedMean (our mean over the seeds vs the authors' seed-42 rerun): RNG streams differ, so this is the fairer one. */
  readonly fidelityMeanMaxError: number;
  /** Rows whose rerun figures all lie in our 95 % prediction interval, of the rows that can be checked. */
  readonly rerunInPrediction: { readonly inside: number; readonly rows: number };
  readonly runs: number;
  readonly wallMs: number;
}

const T95: Record<number, number> = { 1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262 };

export function seedStats(ms: readonly FaroMetrics[]): SeedStats {
  const ci = (xs: number[]) => {
    const n = xs.length;
    const mean = xs.reduce((a, b) => a + b, 0) / n;
    if (n < 2) return { mean, ci: 0 };
    const sd = Math.sqrt(xs.reduce((a, b) => a + (b - mean) ** 2, 0) / (n - 1));
    return { mean, ci: (T95[n - 1] ?? 1.96) * sd / Math.sqrt(n) };
  };
  const l = ci(ms.map((m) => m.lostUtility));
  const v = ci(ms.map((m) => m.sloViolationRate));
  return { n: ms.length, lostMean: l.mean, lostCi: l.ci, violationMean: v.mean, violationCi: v.ci };
}

const JOBS = 10;

interface Entry {
  readonly name: string;
  readonly predictive: boolean;
  readonly variants: Array<{ pred: PredictorName | 'none'; make: (seed: number) => ClusterController }>;
  readonly init: number;
  readonly cfg?: ExtraPolicy['simConfig'];
}

/**
 * Runs the Faro comparison: every size × policy × seed (× predictor for the predictive ones) in the
 * simulator port, beside the authors' figures. Runs one after another in this process (≈ 5–15 s of
 * CPU each).
 */
export async function runFaroComparison(opts: FaroComparisonOptions): Promise<FaroComparison> {
  registerPredictivePolicies();
  const t0 = Date.now();
  const rerunSeed = opts.rerunSeed ?? 42;
  const predictors = opts.predictors ?? ['naive', 'oracle'];
  const log = opts.log ?? (() => undefined);
  const rows: FaroRow[] = [];
  let runs = 0;
  const runOne = (make: (seed: number) => ClusterController, size: number, seed: number, init: number, cfg?: ExtraPolicy['simConfig']) => {
    const r = simulateFaro({ controller: make(seed), capacity: size, seed, initialReplicas: init, config: cfg });
    runs++;
    return r.metrics;
  };
  for (const size of opts.sizes) {
    const names = opts.policies ?? FARO_TABLE_POLICIES;
    const entries: Entry[] = [];
    for (const name of names) {
      const def = faroPolicy(name);
      const preds: Array<PredictorName | 'none'> = def.predictive ? [...predictors] : ['none'];
      entries.push({
        name: def.name,
        predictive: def.predictive,
        variants: preds.map((pred) => ({ pred, make: (seed: number) => def.make(size, seed, pred === 'none' ? 'naive' : pred, JOBS) })),
        init: def.initialReplicas(size, JOBS),
      });
    }
    for (const x of opts.extra ?? []) {
      entries.push({
        name: x.name,
        predictive: false,
        variants: [{ pred: 'none', make: (seed) => x.make(size, seed) }],
        init: x.initialReplicas ?? 1,
        cfg: x.simConfig,
      });
    }
    for (const e of entries) {
      const ours: FaroRow['ours'] = {};
      for (const v of e.variants) {
        const ms: FaroMetrics[] = [];
        let atRerun: FaroMetrics | undefined;
        const statSeeds = v.pred === 'oracle' && opts.oracleSeeds !== undefined ? opts.oracleSeeds : opts.seeds;
        const runSeeds = statSeeds.includes(rerunSeed) ? statSeeds : [...statSeeds, rerunSeed];
        for (const seed of runSeeds) {
          const m = runOne(v.make, size, seed, e.init, e.cfg);
          log(`faro ${size} ${e.name} ${v.pred} seed ${seed}: lost ${m.lostUtility.toFixed(3)} violations ${(100 * m.sloViolationRate).toFixed(2)} %`);
          if (seed === rerunSeed) atRerun = m;
          if (statSeeds.includes(seed)) ms.push(m);
        }
        ours[v.pred] = { rerunSeed: atRerun, seeds: seedStats(ms) };
      }
      const authors = authorsFigure(size, e.name);
      const stored = authors?.stored;
      const none = ours.none;
      const errorStored = stored !== undefined && none !== undefined ? Math.abs(none.seeds.lostMean - stored) / stored : undefined;
      rows.push({ size, policy: e.name, predictive: e.predictive, ours, authors, ...errors(ours, authors), errorStored });
      await new Promise((r) => setImmediate(r));
    }
  }
  const worst = (k: 'errorRerunSeed' | 'errorSeedMean') => rows.reduce((a, r) => Math.max(a, r[k] ?? 0), 0);
  const fidelityMaxError = worst('errorRerunSeed');
  const fidelityMeanMaxError = worst('errorSeedMean');
  return {
    markdown: formatFaroTable(rows, { seeds: opts.seeds, oracleSeeds: opts.oracleSeeds ?? opts.seeds, rerunSeed, fidelityMaxError, fidelityMeanMaxError }),
    rows,
    fidelityMaxError,
    fidelityMeanMaxError,
    rerunInPrediction: {
      inside: rows.filter((r) => r.rerunInPrediction === true).length,
      rows: rows.filter((r) => r.rerunInPrediction !== undefined).length,
    },
    runs,
    wallMs: Date.now() - t0,
  };
}

function errors(ours: FaroRow['ours'], a: AuthorsFigure | undefined): Pick<FaroRow, 'errorRerunSeed' | 'errorSeedMean' | 'rerunInPrediction'> {
  if (a === undefined) return {};
  let eSeed: number | undefined;
  let eMean: number | undefined;
  let inPi: boolean | undefined;
  const pairs: Array<[PredictorName | 'none', number | undefined]> = [['none', a.rerunNaive], ['naive', a.rerunNaive], ['oracle', a.rerunOracle]];
  for (const [p, ref] of pairs) {
    const o = ours[p];
    if (o === undefined || ref === undefined) continue;
    if (o.rerunSeed !== undefined) eSeed = Math.max(eSeed ?? 0, Math.abs(o.rerunSeed.lostUtility - ref) / ref);
    eMean = Math.max(eMean ?? 0, Math.abs(o.seeds.lostMean - ref) / ref);
    if (o.seeds.n > 1) inPi = (inPi ?? true) && Math.abs(o.seeds.lostMean - ref) <= o.seeds.lostCi * Math.sqrt(o.seeds.n + 1);
  }
  return { errorRerunSeed: eSeed, errorSeedMean: eMean, rerunInPrediction: inPi };
}
