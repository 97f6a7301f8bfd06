import { join } from 'node:path';
import { simulate } from '../../autoscaler/sim/engine';
import type { SimResult } from '../../autoscaler/sim/types';
import { meanInterval, type Interval } from '../inference/aggregate';
import { REPORT_SEEDS, reportParts } from '../inference/report-set';
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
 */

export interface DiluInferenceOptions {
  readonly dataDir?: string;
  /** Arrival seeds (default the reporting set's first 3). */
  readonly seeds?: readonly number[];
  /** Also run HAS-GPU's rps suite (default true; ~10 % of the time). */
  readonly hasGpuSuite?: boolean;
  /** Replica cold start, s (the inference bench's 20). */
  readonly coldStartS?: number;
}

export const DILU_INFERENCE_POLICIES = ['hybrid', 'dilu', 'dilu-horizontal'] as const;

/** Devices: time-average and peak whole GPUs held; share: time-average Σ smShare·quota of the replicas (what they use of them). */
interface Cell { avgGpus: number; peakGpus: number; shareGpus: number; violationRate: number }

function cellOf(r: SimResult, durationS: number): Cell {
  return { avgGpus: r.deviceSeconds / durationS, peakGpus: r.peakDevices, shareGpus: r.gpuSeconds / durationS, violationRate: r.violationRate };
}

/** Every policy on `parts` for each seed: per policy, the per-seed cells. */
export function runSuite(parts: readonly ClusterPart[], dataDir: string, seeds: readonly number[], coldStartS: number): Record<string, Cell[]> {
  const out: Record<string, Cell[]> = Object.fromEntries(DILU_INFERENCE_POLICIES.map((p) => [p, []]));
  for (const seed of seeds) {
    const { fns, capability, told, beta } = setUpCluster(parts, dataDir, { seed });
    const durationS = Math.max(...fns.map((f) => f.counts.length * f.intervalS));
    for (const policy of DILU_INFERENCE_POLICIES) {
      const r = simulate(fns, { policy, capability, told, interferenceBeta: beta, coldStartS, seed, ...MECHANISM });
      out[policy].push(cellOf(r, durationS));
    }
  }
  return out;
}

const ci = (x: Interval, d: number) => (x.n > 1 ? `${x.mean.toFixed(d)} [${x.lo.toFixed(d)}, ${x.hi.toFixed(d)}]` : x.mean.toFixed(d));
const col = (cells: Cell[], k: keyof Cell) => meanInterval(cells.map((c) => c[k]));
/** Per seed ours ÷ Dilu of one quantity, mean and interval over seeds. */
const ratio = (t: Record<string, Cell[]>, k: keyof Cell) => meanInterval(t.hybrid.map((c, i) => c[k] / Math.max(Number.MIN_VALUE, t.dilu[i][k])));

function table(title: string, t: Record<string, Cell[]>): string {
  const rows = DILU_INFERENCE_POLICIES.map((p) => `| ${p} | ${ci(col(t[p], 'avgGpus'), 2)} | ${ci(col(t[p], 'peakGpus'), 1)} | ` +
    `${ci(col(t[p], 'shareGpus'), 2)} | ${ci(meanInterval(t[p].map((c) => 100 * c.violationRate)), 2)} |`);
  return [`### ${title}`, '', '| policy | GPUs, time-average | GPUs, peak | Σ s·q, time-average | SLO violations, % |',
    '| --- | --- | --- | --- | --- |', ...rows, '',
    `hybrid ÷ dilu: time-average GPUs ${ci(ratio(t, 'avgGpus'), 3)}, peak GPUs ${ci(ratio(t, 'peakGpus'), 3)}, ` +
    `violation rate ${ci(ratio(t, 'violationRate'), 3)}`, ''].join('\n');
}

export async function runDiluInference(opts: DiluInferenceOptions = {}): Promise<{ markdown: string; gpusVsDilu: number; violationsOurs: number;
  violationsDilu: number; }> {
  const dataDir = opts.dataDir ?? join(__dirname, '..', '..', '..', 'shared', 'data');
  const seeds = opts.seeds ?? REPORT_SEEDS.slice(0, 3);
  const cold = opts.coldStartS ?? 20;
  const report = runSuite(reportParts(dataDir), dataDir, seeds, cold);
  const gpus = ratio(report, 'avgGpus');
  const vOurs = col(report.hybrid, 'violationRate').mean;
  const vDilu = col(report.dilu, 'violationRate').mean;
  const md = [
    '## Dilu in the inference simulator (issue 24)', '',
    `'dilu' = Dilu's profiler shares + lazy scaling + Algorithm 1 (Ω = 1, γ = 1.5, score 0.6·SM + 0.4·memory, best fit; limit = 2 × request; ` +
    `1.5 GB per replica, an estimate); 'dilu-horizontal' = the same placed by our lowest occupancy; 'hybrid' = ours. Default parameters, ` +
    `cold start ${cold} s, seeds ${seeds.join(', ')}; mean [95 % t-interval] over seeds. GPUs: whole devices held by any replica.`, '',
    table('Reporting set (bench/inference/report-set.ts: 30 functions, 1 h, one cluster)', report),
  ];
  if (opts.hasGpuSuite ?? true) {
    md.push(table("HAS-GPU's suite (rps.json, 5 models × 3 SLOs, 250 s, one cluster)", runSuite(hasGpuParts(dataDir, 'rps'), dataDir, seeds, cold)));
  }
  const fewer = gpus.mean < 1 && vOurs <= vDilu;
  md.push(`Target (fewer GPUs than Dilu at ≤ its violations, reporting set, time-average): ${fewer ? 'met' : 'NOT met'}: ` +
    `GPUs ${gpus.mean.toFixed(3)}× Dilu's, violations ${(100 * vOurs).toFixed(2)} % vs ${(100 * vDilu).toFixed(2)} %.`, '');
  return { markdown: md.join('\n'), gpusVsDilu: gpus.mean, violationsOurs: vOurs, violationsDilu: vDilu };
}

if (require.main === module) {
  const t0 = Date.now();
  void runDiluInference().then((r) => {
    process.stdout.write(r.markdown);
    process.stdout.write(`dilu-inference: gpus_vs_dilu=${r.gpusVsDilu.toFixed(3)} violations_ours=${r.violationsOurs.toFixed(4)} ` +
      `violations_dilu=${r.violationsDilu.toFixed(4)} (${((Date.now() - t0) / 1000).toFixed(1)} s)\n`);
  });
}
