/**
 * The inference reporting set, frozen in code before any run on it: HAS-GPU-like workloads
 * (HAS-GPU's 5 models at SLO 1.5/2/2.5× the batch-1 full-GPU latency) whose load shapes come from
 * traces no parameter was tuned on, one hour each:
 * - Faro's 10-job Twitter trace, jobs 0-4, minutes 240-300 (the tuning set uses its first 3 h);
 * - Azure Functions 2019, day 8, the five busiest of the ten functions, minutes 720-780 (the
 *   tuning set uses day 1).
 * Each series is scaled to HAS-GPU's standard workload's mean rate (rps.json, 10.76 req/s), so
 * the level matches the suite the published ratios come from and only the shape is new.
 * The tuning set is everything else bench:inference runs (HAS-GPU 250 s traces, Dilu, Faro's
 * first 3 h, Azure day 1).
 */
import { join } from 'node:path';
import type { LatencyPoint } from '../../autoscaler/rapp/profile-capability';
import type { EnforcedDims } from '../../autoscaler/inference/enforcement';
import { simulate } from '../../autoscaler/sim/engine';
import { readTrace, type Trace } from '../../autoscaler/sim/traces';
import type { SeedTotals } from './aggregate';
import { type ClusterPart, MECHANISM, setUpCluster } from './run';

export const REPORT_MODELS = ['resnet50', 'convnext_tiny', 'mobilenet_v3_large', 'shufflenet_v2_x1_0', 'resnet152'];
export const REPORT_SLOS = [1.5, 2, 2.5];
export const REPORT_SEEDS = [1, 2, 3, 4, 5];

export interface ReportWorkload {
  readonly source: string;
  readonly model: string;
  readonly trace: Trace;
}

/** Scales a per-interval count series so its mean rate is `rps` (req/s); rounding keeps whole requests. */
export function scaleToRate(counts: readonly number[], intervalS: number, rps: number): number[] {
  const mean = counts.reduce((a, b) => a + b, 0) / Math.max(1, counts.length) / intervalS;
  if (!(mean > 0)) return counts.map(() => 0);
  return counts.map((c) => Math.round((c * rps) / mean));
}

export function reportWorkloads(dataDir: string): ReportWorkload[] {
  const T = (f: string) => join(dataDir, 'traces', f);
  const has = readTrace(T('hasgpu_workloads/rps.json'));
  const c = has.series[0].counts;
  const rps = c.reduce((a, b) => a + b, 0) / c.length / has.intervalS;
  const out: ReportWorkload[] = [];
  const faro = readTrace(T('faro_top9_twitter/faro_eval_10jobs_6h_per_minute.csv'));
  REPORT_MODELS.forEach((model, i) => {
    const s = faro.series[i];
    out.push({ source: `faro ${s.name} min 240-300`, model, trace: { name: `faro-${i}`, intervalS: faro.intervalS,
      series: [{ name: s.name, counts: scaleToRate(s.counts.slice(240, 300), faro.intervalS, rps) }] } });
  });
  const az = readTrace(T('azure_functions_2019/azure2019_faro10fn_d01-d14_per_minute.csv'), { day: 8 });
  const busiest = [...az.series].sort((a, b) => b.counts.reduce((x, y) => x + y, 0) - a.counts.reduce((x, y) => x + y, 0)).slice(0, REPORT_MODELS.length);
  REPORT_MODELS.forEach((model, i) => {
    const s = busiest[i];
    out.push({ source: `azure2019 d8 ${s.name.slice(0, 8)} min 720-780`, model, trace: { name: `azure-${i}`, intervalS: az.intervalS,
      series: [{ name: s.name, counts: scaleToRate(s.counts.slice(720, 780), az.intervalS, rps) }] } });
  });
  return out;
}

/** The policies the headline compares, ours first; KPA as HAS-GPU ran KServe (maxReplicas 2). */
export const REPORT_POLICIES = [
  { label: 'hybrid', policy: 'hybrid', params: {} },
  { label: 'static-share', policy: 'static-share', params: {} },
  { label: 'static-share-hasgpu', policy: 'static-share', params: { perModel: false } },
  { label: 'kpa', policy: 'kpa', params: { maxReplicas: 2 } },
];

/** The whole reporting set as one cluster: every workload at every SLO, 30 functions. */
export function reportParts(dataDir: string): ClusterPart[] {
  return reportWorkloads(dataDir).flatMap((w) => REPORT_SLOS.map((sloMult) => ({ prefix: `${w.trace.name}-${sloMult}`, trace: w.trace, model: w.model,
    sloMult })));
}

/**
 * Runs the reporting set: per seed, every REPORT_POLICIES entry on the one cluster, device cost
 * (SeedTotals for `headline`), and the share cost s·q per policy, mean over seeds. `toldProfiles`:
 * the policies' profiles per model from a predictor instead of the re-measured ones.
 */
export function runReportingSet(dataDir: string, o: { coldStartS: number; enforced?: EnforcedDims;
  toldProfiles?: Record<string, LatencyPoint[]>; }): { perSeed: SeedTotals[]; shareCost: Record<string, number>; functions: number } {
  const parts = reportParts(dataDir);
  const shareCost: Record<string, number> = Object.fromEntries(REPORT_POLICIES.map((p) => [p.label, 0]));
  const perSeed = REPORT_SEEDS.map((seed) => {
    const { fns, capability, told, beta } = setUpCluster(parts, dataDir, { seed, enforced: o.enforced, toldProfiles: o.toldProfiles });
    const t: Record<string, { violations: number; requests: number; cost: number }> = {};
    for (const p of REPORT_POLICIES) {
      const r = simulate(fns, { policy: p.policy, params: p.params, capability, told, interferenceBeta: beta, coldStartS: o.coldStartS, seed, ...MECHANISM });
      t[p.label] = { violations: r.violations, requests: r.requests, cost: r.deviceCost };
      shareCost[p.label] += r.cost / REPORT_SEEDS.length;
    }
    return t as SeedTotals;
  });
  return { perSeed, shareCost, functions: parts.length };
}
