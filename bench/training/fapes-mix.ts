/**
 * FaPES-style best-effort runs for `bench/training-bench.ts`: the 195job trace with no deadlines
 * (FaPES' setting) on n16g8, and the loaning row (16 training + 4 inference servers, inference
 * demand from the Azure Functions 2019 per-minute load, 600 s rounds as in FaPES Table 3).
 */
import { demandFromLoad, loadAzureFunctionsLoad } from '../../autoscaler/sim/training/inference';
import { jctStats, runPolicy } from '../../autoscaler/sim/training/run';
import type { SimJob, SimResult } from '../../autoscaler/sim/training/engine';
import type { ClusterSpec } from '../../autoscaler/training/types';

/** FaPES Table 1 (×1000 s / samples/s) and §7.5 Table 3 (10-minute rounds), for the comparison. */
export const FAPES_PAPER = {
  avgJct: { fapes: 1.76, elasticflow: 2.34, pollux: 2.07, optimus: 1.96 } as Record<string, number>,
  p95Jct: { fapes: 4.03, elasticflow: 5.75, pollux: 4.99, optimus: 4.24 } as Record<string, number>,
  avgQueueing: { fapes: 0.19, elasticflow: 0.37, pollux: 0.24, optimus: 0.0 } as Record<string, number>,
  goodput: { fapes: 387.86, elasticflow: 277.54, pollux: 350.47, optimus: 257.31 } as Record<string, number>,
  loan: { withUtil: 0.93, withoutUtil: 0.82, withJctMin: 38.5, withoutJctMin: 41.6 },
};

export interface MixRow {
  readonly policy: string;
  readonly result: SimResult;
  readonly avgJct: number;
  readonly p95Jct: number;
  readonly avgQueueing: number;
  /** Mean over finished jobs of samples (iterations × submitted batch) per second of run time. */
  readonly avgGoodput: number;
}

export function mixRow(policy: string, result: SimResult, jobs: readonly SimJob[]): MixRow {
  const byId = new Map(jobs.map((j) => [j.id, j]));
  const s = jctStats(result);
  const done = result.jobs.filter((j) => j.endTime !== undefined);
  const gp = done.map((j) => (byId.get(j.id)!.iterations * byId.get(j.id)!.batchSize) / Math.max(1, j.endTime! - (j.startTime ?? j.submitTime)));
  return { policy, result, avgJct: s.avgJct, p95Jct: s.p95Jct, avgQueueing: s.avgQueueing, avgGoodput: gp.reduce((a, b) => a + b, 0) / Math.max(1, gp.length) };
}

export function runBestEffort(jobs: readonly SimJob[], cluster: ClusterSpec, slot: number, policies: readonly string[]): MixRow[] {
  const be = jobs.map((j) => ({ ...j, deadline: undefined }));
  return policies.map((p) => mixRow(p, runPolicy({ jobs: be, cluster, slotSeconds: slot, policy: p }), be));
}

export interface LoanRow {
  readonly policy: string;
  readonly loaning: boolean;
  readonly row: MixRow;
  /** (training + inference GPU-seconds) ÷ cluster GPU-seconds over the run. */
  readonly util: number;
  readonly trainUtil: number;
}

/** `trainingNodes` training servers + `inferenceNodes` inference servers, with and without loans. */
export function runLoaning(
  jobs: readonly SimJob[],
  trainingNodes: number,
  inferenceNodes: number,
  gpusPerNode: number,
  slot: number,
  policies: readonly string[],
  tracePath?: string,
): LoanRow[] {
  const load = loadAzureFunctionsLoad(tracePath);
  const origin = Math.min(...jobs.map((j) => j.submitTime));
  const cluster: ClusterSpec = { nodes: trainingNodes + inferenceNodes, gpusPerNode };
  const servers = [...Array(inferenceNodes).keys()].map((i) => trainingNodes + i);
  const out: LoanRow[] = [];
  for (const policy of policies)
    for (const loaning of [false, true]) {
      const r = runPolicy({ jobs, cluster, slotSeconds: slot, policy,
        inference: { servers, demandAt: demandFromLoad(load, inferenceNodes, origin), loaning } });
      const u = r.utilisation;
      out.push({
        policy,
        loaning,
        row: mixRow(policy, r, jobs),
        util: (u.trainingGpuSeconds + u.inferenceGpuSeconds) / Math.max(1, u.capacityGpuSeconds),
        trainUtil: u.trainingGpuSeconds / Math.max(1, u.capacityGpuSeconds),
      });
    }
  return out;
}
