/**
 * Loaders for the ElasticFlow artifact's data (read at run time from the shared data folder, never
 * copied): job traces, throughput tables, cluster specs, and the per-job `max_gpu` rules of the
 * authors' simulator (`scheduler/models.py:get_max_gpu` for ElasticFlow, the table's largest
 * column capped at min(64, batch) for the baselines).
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { curveFromRow } from '../../training/curve';
import type { ClusterSpec, ScalingCurve } from '../../training/types';

export const DEFAULT_DATA_DIR = '/work/shared/data/elasticflow';
export type GpuType = 'A100' | 'T4';

/** model → global batch → curve. */
export type ThroughputTables = Record<string, Record<number, ScalingCurve>>;

export interface TraceJob {
  readonly id: string;
  readonly submitTime: number;
  readonly iterations: number;
  readonly model: string;
  /** Absolute deadline (s); undefined for best-effort rows. */
  readonly deadline?: number;
  readonly batchSize: number;
  readonly requestedGpus: number;
  readonly duration: number;
}

function parseCsv(text: string): Array<Record<string, string>> {
  const lines = text.split(/\r?\n/).filter((l) => l.trim() !== '');
  const head = lines[0].split(',').map((h) => h.trim());
  return lines.slice(1).map((l) => {
    const cells = l.split(',');
    const row: Record<string, string> = {};
    head.forEach((h, i) => (row[h] = (cells[i] ?? '').trim()));
    return row;
  });
}

const num = (row: Record<string, string>, ...keys: string[]) => {
  for (const k of keys) if (row[k] !== undefined && row[k] !== '') return Number(row[k]);
  return NaN;
};

/** Parses a trace in any of the artifact's column layouts. */
export function parseTrace(text: string): TraceJob[] {
  return parseCsv(text)
    .map((r, i) => {
      const be = r.best_effort !== undefined && Number(r.best_effort) === 1;
      return {
        id: r.job_id || String(i),
        submitTime: num(r, 'submit_time', 'submission_time'),
        iterations: num(r, 'iteration', 'num_iteration'),
        model: r.model_name,
        deadline: be ? undefined : num(r, 'ddl', 'deadline'),
        batchSize: num(r, 'batch_size'),
        requestedGpus: num(r, 'num_gpu'),
        duration: num(r, 'duration'),
      };
    })
    .sort((a, b) => a.submitTime - b.submitTime);
}

export function loadTrace(path: string): TraceJob[] {
  return parseTrace(readFileSync(path, 'utf8'));
}

export function loadThroughputs(dataDir: string, gpu: GpuType): ThroughputTables {
  const dir = join(dataDir, `throughputs_${gpu}`);
  const out: ThroughputTables = {};
  for (const f of readdirSync(dir).filter((x) => x.endsWith('.csv'))) {
    const rows = parseCsv(readFileSync(join(dir, f), 'utf8'));
    const model = f.replace(/\.csv$/, '');
    out[model] = {};
    for (const r of rows) {
      const cells: Record<number, number> = {};
      for (const [k, v] of Object.entries(r)) if (k !== 'global_batch_size' && v !== '' && v !== 'nan') cells[Number(k)] = Number(v);
      out[model][Number(r.global_batch_size)] = curveFromRow(cells);
    }
  }
  return out;
}

/** Parses `nXgY` (X nodes, Y GPUs per node). */
export function parseClusterName(name: string): ClusterSpec {
  const m = /^n(\d+)g(\d+)$/.exec(name);
  if (!m) throw new Error(`cluster must look like n16g8, got "${name}"`);
  return { nodes: Number(m[1]), gpusPerNode: Number(m[2]) };
}

/** Reads `cluster_specs/nXgY.csv` (num_switch, num_node_p_switch, num_gpu_p_node, ...). */
export function loadClusterSpec(dataDir: string, name: string): ClusterSpec {
  const [r] = parseCsv(readFileSync(join(dataDir, 'cluster_specs', `${name}.csv`), 'utf8'));
  const perSwitch = Number(r.num_node_p_switch);
  return { nodes: Number(r.num_switch) * perSwitch, gpusPerNode: Number(r.num_gpu_p_node), nodesPerSwitch: perSwitch };
}

/** ElasticFlow's hand-written `get_max_gpu` (A100 and T4 branches, as in the artifact). */
export function maxGpuElasticFlow(model: string, batch: number, gpu: GpuType): number {
  if (gpu === 'T4') {
    if (model === 'bert' || model === 'cifar10') return 16;
    if (model === 'deepspeech2' && batch === 320) return 32;
    if (model === 'yolov3') return 4;
    if (model === 'ncf') return 1;
    return 64;
  }
  if (model === 'deepspeech2') return batch;
  if (model === 'gpt2' && batch === 128) return 16;
  if (model === 'gpt2' && batch === 256) return 32;
  if (model === 'bert') return batch === 64 ? 8 : 16;
  if (model === 'inception3' && batch === 64) return 16;
  if (model === 'inception3' && batch === 128) return 32;
  if (model === 'resnet50') return batch === 64 ? 32 : Math.min(batch, 64);
  if (model === 'vgg16' && batch === 64) return 32;
  return Math.min(batch, 64);
}

/** The baselines' max_gpu: largest GPU column with a value, capped at min(64, batch). */
export function maxGpuBaseline(curve: ScalingCurve, batch: number): number {
  const top = curve.gpus.length ? curve.gpus[curve.gpus.length - 1] : 0;
  return Math.min(64, top, batch);
}
