/** Builds simulator jobs from an artifact trace and runs a named policy on it. */
import { coAdapt } from '../../training/fapes/goodput';
import { getPolicy } from '../../training/registry';
import type { ClusterSpec } from '../../training/types';
import { maxGpuBaseline, maxGpuElasticFlow, type GpuType, type ThroughputTables, type TraceJob } from './data';
import { simulate, type InferenceVC, type SimJob, type SimResult } from './engine';

export interface BuildOptions {
  /** Gradient noise scale per model, for batch co-adaptation (FaPES goodput); absent = fixed batch. */
  readonly gnsByModel?: Readonly<Record<string, number>>;
}

export function buildSimJobs(trace: readonly TraceJob[], tables: ThroughputTables, gpu: GpuType, opts: BuildOptions = {}): SimJob[] {
  return trace.map((t) => {
    const byBatch = tables[t.model];
    if (!byBatch) throw new Error(`no throughput table for model ${t.model} (${gpu})`);
    const curve = byBatch[t.batchSize];
    if (!curve) throw new Error(`no throughput row for ${t.model} batch ${t.batchSize} (${gpu})`);
    const phi = opts.gnsByModel?.[t.model];
    return {
      id: t.id,
      model: t.model,
      submitTime: t.submitTime,
      iterations: t.iterations,
      deadline: t.deadline,
      batchSize: t.batchSize,
      requestedGpus: t.requestedGpus,
      curve,
      adaptiveCurve: phi === undefined ? undefined : coAdapt(byBatch, t.batchSize, phi).curve,
      maxGpusElastic: maxGpuElasticFlow(t.model, t.batchSize, gpu),
      maxGpusBaseline: maxGpuBaseline(curve, t.batchSize),
      gradientNoiseScale: phi,
    };
  });
}

export interface RunSpec {
  readonly jobs: readonly SimJob[];
  readonly cluster: ClusterSpec;
  readonly slotSeconds: number;
  readonly policy: string;
  readonly until?: number;
  /** Optional inference VC with loaning (FaPES-Manager). */
  readonly inference?: InferenceVC;
}

export function runPolicy(spec: RunSpec): SimResult {
  return simulate(spec.jobs, { cluster: spec.cluster, slotSeconds: spec.slotSeconds, policy: getPolicy(spec.policy), until: spec.until,
    inference: spec.inference });
}

/** JCT and queueing figures over finished jobs (s). */
export function jctStats(r: SimResult, filter: (j: SimResult['jobs'][number]) => boolean = () => true) {
  const done = r.jobs.filter((j) => j.endTime !== undefined && filter(j));
  const jct = done.map((j) => j.endTime! - j.submitTime).sort((a, b) => a - b);
  const q = done.map((j) => (j.startTime ?? j.submitTime) - j.submitTime);
  const mean = (a: number[]) => (a.length ? a.reduce((x, y) => x + y, 0) / a.length : NaN);
  return {
    finished: done.length,
    avgJct: mean(jct),
    p95Jct: jct.length ? jct[Math.min(jct.length - 1, Math.ceil(0.95 * jct.length) - 1)] : NaN,
    avgQueueing: mean(q),
  };
}

export function percentile(xs: readonly number[], p: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(p * s.length) - 1))];
}
