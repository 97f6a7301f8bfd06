import { join } from 'node:path';
import { simulate } from '../../autoscaler/sim/engine';
import type { SimResult } from '../../autoscaler/sim/types';
import { meanInterval, type Interval } from '../inference/aggregate';
import { readTrace, type Trace } from '../../autoscaler/sim/traces';
import { REPORT_MODELS, REPORT_SEEDS, REPORT_SLOS, reportParts, scaleToRate } from '../inference/report-set';
import { type ClusterPart, hasGpuParts, MECHANISM, setUpCluster } from '../inference/run';

/**
 * Dilu in OUR inference simulator (issue 24, "then ours"): the faithful Dilu ('dilu': its profiler's
 * SM shares, lazy scale-out/in and Algorithm 1's placement with Ω = 1, γ = 1.5 and the 0.6/0.4
 * SM/memory score), 'dilu-horizontal' (the same without Algorithm 1: our lowest-occupancy placement)
 * and ours ('hybrid'), each with its default parameters (nothing is tuned here), on the inference
 * bench's reporting set (bench/inference/report-set.ts: 30 functions, one hour, on one shared
 * cluster) and, optionally, HAS-GPU's own suite (its rps trace, 15 functions, 250 s). Devices are
 * whole GPUs held by any replica: time-average (device-seconds ÷ the trace's length) and peak.
 * Per seed, then mean and a 95 % Student-t interval over seeds.
 *
 * Ours at Dilu's violations (engineer H): 'mlfaas-packed' (the hybrid packed by smShare × quota,
 * autoscaler/inference/placement-packed*.ts, placement-migrate.ts) trades resources for latency by
 * ONE parameter, `planPercentile`, the latency percentile it plans the SLO for (default 0: the
 * spec's p99). The setting is chosen on the TUNING twin of the reporting set only (`tuningParts`,
 * seeds TUNE_SEEDS; never the reporting set): the fewest time-average GPUs among TUNE_GRID's
 * settings whose violations are ≤ Dilu's there (`tuneSetting`, run by `--tune`; its choice is
 * MATCHED). Then the default and MATCHED run on the reporting set with its seeds beside 'dilu' and
 * 'hybrid'.
 */

export interface DiluInferenceOptions {
  readonly dataDir?: string;
  /** Arrival seeds (default the reporting set's first 3). */
  readonly seeds?: readonly number[];
  /** Also run HAS-GPU's rps suite, the four rows (default false). */
  readonly hasGpuSuite?: boolean;
  /** Run the tuning sweep on the tuning twin first and use its choice (default false: MATCHED, its recorded choice; ~4 min more). */
  readonly tune?: boolean;
  /** Also run 'dilu-horizontal' (default false: it is not in the headline, and time). */
  readonly diluHorizontal?: boolean;
  /** Replica cold start, s (the inference bench's 20). */
  readonly coldStartS?: number;
}

export const DILU_INFERENCE_POLICIES = ['hybrid', 'dilu', 'dilu-horizontal'] as const;

/** A row: a label, the registry policy and its parameters. */
export interface Row { label: string; policy: string; params?: Record<string, number | string | boolean> }

/** Seeds of the tuning sweep (not the reporting set's). */
export const TUNE_SEEDS = [101, 102, 103] as const;
/** The one parameter swept for ours: the percentile planned for (placement-packed-policy.ts; 0 = the spec's p99). */
export const TUNE_KEY = 'planPercentile';
export const TUNE_GRID = [0, 95, 90, 80, 70, 60, 50] as const;
/**
 * The tuning sweep's choice, `npx tsx bench/multitenant/dilu-inference.ts --tune` (2026-11-27, tuning
 * twin, seeds 101-103; time-average GPUs / violations %): dilu 6.00 / 7.33; planPercentile 0: 11.08 /
 * 0.24, 95: 6.38 / 0.66, 90: 5.10 / 0.94, 80: 3.75 / 2.41, 70: 3.12 / 4.39, 60: 3.00 / 6.26,
 * 50: 2.93 / 8.22 (above Dilu's) → 60.
 */
export const MATCHED = 60;

/**
 * The tuning twin of the reporting set (never the reporting set's windows): the same construction
 * (HAS-GPU's 5 models × SLO 1.5/2/2.5, one hour, scaled to rps.json's mean rate, one cluster of 30
 * functions) from the windows report-set.ts leaves to tuning: Faro's jobs 0-4 at minutes 60-120 (its
 * first 3 h) and Azure 2019 day 1's five busiest functions at minutes 720-780.
 */
export function tuningParts(dataDir: string): ClusterPart[] {
  const T = (f: string) => join(dataDir, 'traces', f);
  const c = readTrace(T('hasgpu_workloads/rps.json'));
  const rps = c.series[0].counts.reduce((a, b) => a + b, 0) / c.series[0].counts.length / c.intervalS;
  const one = (name: string, t: Trace, counts: number[]): Trace =>
    ({ name, intervalS: t.intervalS, series: [{ name, counts: scaleToRate(counts, t.intervalS, rps) }] });
  const faro = readTrace(T('faro_top9_twitter/faro_eval_10jobs_6h_per_minute.csv'));
  const az = readTrace(T('azure_functions_2019/azure2019_faro10fn_d01-d14_per_minute.csv'), { day: 1 });
  const sum = (x: number[]) => x.reduce((a, b) => a + b, 0);
  const busiest = [...az.series].sort((a, b) => sum(b.counts) - sum(a.counts));
  const traces = [...REPORT_MODELS.map((model, i) => ({ model, trace: one(`tune-faro-${i}`, faro, faro.series[i].counts.slice(60, 120)) })),
    ...REPORT_MODELS.map((model, i) => ({ model, trace: one(`tune-azure-${i}`, az, busiest[i].counts.slice(720, 780)) }))];
  return traces.flatMap((w) => REPORT_SLOS.map((sloMult) => ({ prefix: `${w.trace.name}-${sloMult}`, trace: w.trace, model: w.model, sloMult })));
}

/** Devices: time-average and peak whole GPUs held; share: time-average Σ smShare·quota of the replicas (what they use of them). */
interface Cell { avgGpus: number; peakGpus: number; shareGpus: number; violationRate: number }

function cellOf(r: SimResult, durationS: number): Cell {
  return { avgGpus: r.deviceSeconds / durationS, peakGpus: r.peakDevices, shareGpus: r.gpuSeconds / durationS, violationRate: r.violationRate };
}

const defaultRows = (): Row[] => DILU_INFERENCE_POLICIES.map((p) => ({ label: p, policy: p }));

/** Every row on `parts` for each seed: per label, the per-seed cells. */
export function runSuite(parts: readonly ClusterPart[], dataDir: string, seeds: readonly number[], coldStartS: number,
  rows: readonly Row[] = defaultRows()): Record<string, Cell[]> {
  const out: Record<string, Cell[]> = Object.fromEntries(rows.map((r) => [r.label, []]));
  for (const seed of seeds) {
    const { fns, capability, told, beta } = setUpCluster(parts, dataDir, { seed });
    const durationS = Math.max(...fns.map((f) => f.counts.length * f.intervalS));
    for (const row of rows) {
      const r = simulate(fns, { policy: row.policy, params: row.params, capability, told, interferenceBeta: beta, coldStartS, seed, ...MECHANISM });
      out[row.label].push(cellOf(r, durationS));
    }
  }
  return out;
}

/**
 * The tuning sweep: Dilu and ours at each TUNE_GRID setting on `parts` (the tuning twin); the
 * choice is the fewest mean time-average GPUs among the settings with mean violations ≤ Dilu's
 * (undefined when none is).
 */
export function tuneSetting(parts: readonly ClusterPart[], dataDir: string, seeds: readonly number[], coldStartS: number,
  grid: readonly number[] = TUNE_GRID): { table: Record<string, Cell[]>; rows: Row[]; chosen?: number } {
  const rows: Row[] = [{ label: 'dilu', policy: 'dilu' }, ...grid.map((v) => ({ label: `mlfaas-packed ${TUNE_KEY}=${v}`, policy: 'mlfaas-packed',
    params: { [TUNE_KEY]: v } }))];
  const table = runSuite(parts, dataDir, seeds, coldStartS, rows);
  const mean = (cells: Cell[], k: keyof Cell) => cells.reduce((a, c) => a + c[k], 0) / cells.length;
  const vDilu = mean(table.dilu, 'violationRate');
  let chosen: number | undefined;
  let best = Infinity;
  grid.forEach((v, i) => {
    const cells = table[rows[i + 1].label];
    if (mean(cells, 'violationRate') <= vDilu && mean(cells, 'avgGpus') < best) {
      best = mean(cells, 'avgGpus');
      chosen = v;
    }
  });
  return { table, rows, chosen };
}

const ci = (x: Interval, d: number) => (x.n > 1 ? `${x.mean.toFixed(d)} [${x.lo.toFixed(d)}, ${x.hi.toFixed(d)}]` : x.mean.toFixed(d));
const col = (cells: Cell[], k: keyof Cell) => meanInterval(cells.map((c) => c[k]));
/** Per seed `a` ÷ `b` of one quantity, mean and interval over seeds. */
const ratio = (t: Record<string, Cell[]>, k: keyof Cell, a = 'hybrid', b = 'dilu') =>
  meanInterval(t[a].map((c, i) => c[k] / Math.max(Number.MIN_VALUE, t[b][i][k])));

function table(title: string, t: Record<string, Cell[]>, labels: readonly string[] = Object.keys(t), ours: readonly string[] = ['hybrid']): string {
  const rows = labels.map((p) => `| ${p} | ${ci(col(t[p], 'avgGpus'), 2)} | ${ci(col(t[p], 'peakGpus'), 1)} | ` +
    `${ci(col(t[p], 'shareGpus'), 2)} | ${ci(meanInterval(t[p].map((c) => 100 * c.violationRate)), 2)} |`);
  const ratios = t.dilu ? ours.filter((o) => t[o]).map((o) => `${o} ÷ dilu: time-average GPUs ${ci(ratio(t, 'avgGpus', o), 3)}, ` +
    `peak GPUs ${ci(ratio(t, 'peakGpus', o), 3)}, violation rate ${ci(ratio(t, 'violationRate', o), 3)}`) : [];
  return [`### ${title}`, '', '| policy | GPUs, time-average | GPUs, peak | Σ s·q, time-average | SLO violations, % |',
    '| --- | --- | --- | --- | --- |', ...rows, '', ...ratios.flatMap((r) => [r, '']), ''].join('\n');
}

export interface DiluInferenceResult {
  markdown: string;
  /** hybrid ÷ dilu, time-average GPUs (G's headline, the hybrid at its default, ~0.2 % violations). */
  gpusVsDilu: number;
  violationsOurs: number;
  violationsDilu: number;
  /** Ours at the tuned setting ÷ dilu, time-average GPUs on the reporting set (mean of per-seed ratios). */
  gpusVsDiluAtEqualViolations: number;
  /** Whether ours' mean violations at that setting are ≤ Dilu's on the reporting set (else the ratio is not at equal violations). */
  atEqualViolations: boolean;
  violationsMatched: number;
  matchedSetting: number;
}

export async function runDiluInference(opts: DiluInferenceOptions = {}): Promise<DiluInferenceResult> {
  const dataDir = opts.dataDir ?? join(__dirname, '..', '..', '..', 'shared', 'data');
  const seeds = opts.seeds ?? REPORT_SEEDS;
  const cold = opts.coldStartS ?? 20;
  const md = ['## Dilu in the inference simulator (issue 24)', ''];
  let q = MATCHED;
  if (opts.tune) {
    const tune = tuneSetting(tuningParts(dataDir), dataDir, TUNE_SEEDS, cold);
    if (tune.chosen !== undefined) q = tune.chosen;
    md.push(table(`Tuning twin (tuningParts: 30 functions, 1 h, Faro min 60-120 and Azure d1), seeds ${TUNE_SEEDS.join(', ')}; ours' ${TUNE_KEY} swept`,
      tune.table), `Chosen on the tuning twin (fewest GPUs at violations ≤ Dilu's): ${TUNE_KEY} ${tune.chosen ?? `none; using ${q}`}.`, '');
  }
  const matched = `mlfaas-packed ${TUNE_KEY}=${q}`;
  const rows: Row[] = [{ label: 'dilu', policy: 'dilu' }, { label: 'hybrid', policy: 'hybrid' }, { label: 'mlfaas-packed', policy: 'mlfaas-packed' },
    { label: matched, policy: 'mlfaas-packed', params: { [TUNE_KEY]: q } },
    ...(opts.diluHorizontal ? [{ label: 'dilu-horizontal', policy: 'dilu-horizontal' }] : [])];
  if (opts.hasGpuSuite) {
    const has = runSuite(hasGpuParts(dataDir, 'rps'), dataDir, seeds, cold, rows);
    md.push(table("HAS-GPU's suite (rps.json, 5 models × 3 SLOs, 250 s, one cluster)", has, rows.map((r) => r.label), ['hybrid', 'mlfaas-packed', matched]));
  }
  const report = runSuite(reportParts(dataDir), dataDir, seeds, cold, rows);
  const gpus = ratio(report, 'avgGpus');
  const vOurs = col(report.hybrid, 'violationRate').mean;
  const vDilu = col(report.dilu, 'violationRate').mean;
  const vMatched = col(report[matched], 'violationRate').mean;
  const atEq = ratio(report, 'avgGpus', matched).mean;
  const eq = vMatched <= vDilu;
  md.push(
    `'dilu' = Dilu's profiler shares + lazy scaling + Algorithm 1 (Ω = 1, γ = 1.5, score 0.6·SM + 0.4·memory, best fit; limit = 2 × request; ` +
    `1.5 GB per replica, an estimate); 'hybrid' = ours, HAS-GPU's lowest-occupancy placement; 'mlfaas-packed' = the hybrid placed best-fit by ` +
    `smShare × quota (join a slot on the fullest device, else open one where the fewest SMs are free; the SLO guard's replica too), ` +
    `consolidation order on scale-in and moves off devices at occupancy ≤ 0.3 (copy cold-started, original held until ready); ` +
    `'${matched}' = the same planning for the p${q} latency (the tuning twin's choice; violations judged at p99). ` +
    `Cold start ${cold} s, seeds ${seeds.join(', ')}; mean [95 % t-interval] over seeds. ` +
    'GPUs: whole devices held by any replica.', '',
    table('Reporting set (bench/inference/report-set.ts: 30 functions, 1 h, one cluster)', report, rows.map((r) => r.label),
      ['hybrid', 'mlfaas-packed', matched]));
  md.push(`Target (fewer GPUs than Dilu at ≤ its violations, reporting set, time-average): ${eq && atEq < 1 ? 'met' : 'NOT met'}: ` +
    `${matched} uses ${atEq.toFixed(3)}× Dilu's GPUs at ${(100 * vMatched).toFixed(2)} % violations vs Dilu's ${(100 * vDilu).toFixed(2)} %` +
    `${eq ? '' : ' (FLAG: more violations than Dilu, so not at equal violations)'}; the default hybrid ${gpus.mean.toFixed(3)}× at ` +
    `${(100 * vOurs).toFixed(2)} %.`, '');
  return { markdown: md.join('\n'), gpusVsDilu: gpus.mean, violationsOurs: vOurs, violationsDilu: vDilu, gpusVsDiluAtEqualViolations: atEq,
    atEqualViolations: eq, violationsMatched: vMatched, matchedSetting: q };
}

if (require.main === module) {
  const t0 = Date.now();
  void runDiluInference({ tune: process.argv.includes('--tune'), hasGpuSuite: process.argv.includes('--hasgpu') }).then((r) => {
    process.stdout.write(r.markdown);
    process.stdout.write(`dilu-inference: gpus_vs_dilu=${r.gpusVsDilu.toFixed(3)} gpus_vs_dilu_at_equal_violations=` +
      `${r.gpusVsDiluAtEqualViolations.toFixed(3)}${r.atEqualViolations ? '' : ' (FLAG: violations above dilu)'} ${TUNE_KEY}=${r.matchedSetting} ` +
      `violations_ours=${r.violationsOurs.toFixed(4)} violations_matched=${r.violationsMatched.toFixed(4)} ` +
      `violations_dilu=${r.violationsDilu.toFixed(4)} (${((Date.now() - t0) / 1000).toFixed(1)} s)\n`);
  });
}
