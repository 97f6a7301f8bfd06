/**
 * The CPU latency predictor (issue 12): two small networks trained on the platform's own
 * measurements of 32 torchvision architectures on this kind of node (bench/rapp/data/cpu-corpus.*,
 * bench/rapp/cpu_cv.py --export), shipped with the platform in `models/`:
 * - `cpu-latency-static.onnx`: from the model's ONNX graph alone (before anything is measured);
 * - `cpu-latency.onnx`: the same plus ONE measured point (batch 1, one core, quota 1), relative
 *   to which it predicts how batching, more cores and a quota scale this graph.
 * Feature rows are built exactly as bench/rapp/cpu_cv.py builds them. Pure but for the model runs.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { LatencyPoint } from './profile-capability';
import { LatencyModel } from './latency-model';

export const CPU_MODELS_DIR = join(__dirname, 'models');
export const CPU_MODEL = join(CPU_MODELS_DIR, 'cpu-latency.onnx');
export const CPU_STATIC_MODEL = join(CPU_MODELS_DIR, 'cpu-latency-static.onnx');
/** Which graph features each network takes (chosen by cross-validation at export), and Python's sample predictions. */
export const CPU_META = join(CPU_MODELS_DIR, 'cpu-latency.json');

/** The graph features a network sees: none, the graph-level ones, or all (bench/rapp/cpu_cv.py VARIANTS). */
export type FeatureVariant = 'config' | 'graph' | 'all';

export function pickFeatures(vector: readonly number[], variant: FeatureVariant): number[] {
  if (variant === 'config') return [];
  if (variant === 'graph') return [vector[0], ...vector.slice(-6)];
  return [...vector];
}

export interface CpuMeta {
  variants: { 'cpu-latency': FeatureVariant; 'cpu-latency-static': FeatureVariant };
}

export function readCpuMeta(): CpuMeta {
  const m = JSON.parse(readFileSync(CPU_META, 'utf8')) as CpuMeta;
  for (const v of Object.values(m.variants ?? {})) if (!['config', 'graph', 'all'].includes(v)) throw new Error(`${CPU_META}: unknown feature variant ${v}`);
  return m;
}

/** The point a deploy-time profile measures first, to which the anchored model is relative. */
export const ANCHOR = { batch: 1, cores: 1, quota: 1 } as const;

/** One feature row: the graph's features (per variant), the configuration, and (anchored) the measured point. */
export function cpuFeatureRow(vector: readonly number[], batch: number, cores: number, quota: number, anchorMs?: number,
  variant: FeatureVariant = 'all'): number[] {
  const g = pickFeatures(vector, variant);
  const cfg = [batch, cores, quota, Math.log(batch), Math.log(cores), Math.log(quota)];
  if (anchorMs === undefined) return [...g, ...cfg];
  if (!(anchorMs > 0)) throw new Error(`anchor latency ${anchorMs} ms must be positive`);
  return [...g, ...cfg, Math.log(anchorMs), Math.log((anchorMs * batch) / (cores * quota))];
}

export interface CpuGrid {
  batches: readonly number[];
  quotas: readonly number[];
  /** Cores of the replica's device (the platform's CPU device is one core). */
  cores: number;
}

/** Whether the shipped models are there (a checkout without them profiles by measurement only). */
export function haveCpuModels(): boolean {
  return existsSync(CPU_MODEL) && existsSync(CPU_STATIC_MODEL) && existsSync(CPU_META);
}

/** The largest batch in the corpus the networks learnt from (bench/rapp/measure-cpu.ts BATCHES). */
export const CORPUS_MAX_BATCH = 8;

/**
 * The grid's latencies for a graph: from the graph alone without `anchorMs`, else relative to the
 * measured batch-1 point. Points carry smShare 1 (the CPU device) and throughput batch ÷ latency.
 * A batch beyond the corpus's is not left to the network's extrapolation: latency continues the
 * trend of the last doubling it learnt (b/2 → b), per quota.
 */
export async function predictCpuProfile(model: LatencyModel, vector: readonly number[], grid: CpuGrid, anchorMs: number | undefined,
  variant: FeatureVariant): Promise<Array<LatencyPoint & { throughput: number }>> {
  const top = CORPUS_MAX_BATCH;
  const inRange = [...new Set([...grid.batches.filter((b) => b <= top), top / 2, top])];
  const cfg: Array<[number, number]> = [];
  for (const q of grid.quotas) for (const b of inRange) cfg.push([b, q]);
  const ms = await model.predictMs(cfg.map(([b, q]) => cpuFeatureRow(vector, b, grid.cores, q, anchorMs, variant)));
  const at = new Map(cfg.map(([b, q], i) => [`${b}|${q}`, ms[i]]));
  const latency = (b: number, q: number): number => {
    if (b <= top) return at.get(`${b}|${q}`)!;
    const last = at.get(`${top}|${q}`)!;
    const growth = Math.max(1, last / at.get(`${top / 2}|${q}`)!); // a bigger batch is never faster
    return last * Math.pow(growth, Math.log2(b / top));
  };
  const out: Array<LatencyPoint & { throughput: number }> = [];
  for (const quota of grid.quotas) for (const batch of grid.batches) {
    const l = latency(batch, quota);
    out.push({ batch, smShare: 1, quota, latencyMs: round3(l), throughput: round3((1000 * batch) / l) });
  }
  return out;
}

const round3 = (x: number) => Math.round(x * 1000) / 1000;
