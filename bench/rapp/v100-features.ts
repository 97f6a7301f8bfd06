/**
 * The V100 predictor's features (bench/rapp/v100_cv.py `features`, runtime variant), built here
 * from RaPP's graph-feature JSON: the bench checks both against each other on the exported sample.
 * Read from ../shared at run time (no licence).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

interface Graph {
  node_features: number[][];
  graph_features: number[];
}

export const ANCHOR_QUOTAS = [0.2, 0.4, 0.6, 0.8, 1.0];

export function readGraphs(dataDir: string): Record<string, Graph> {
  return JSON.parse(readFileSync(join(dataDir, 'latency', 'rapp_v100', 'rapp_model_graph_features.json'), 'utf8'));
}

/** ln of the profiled batch-1 latency at quota q (the 5 runtime graph features: quotas 0.2..1). */
export function lnAnchor(gf: readonly number[], q: number): number {
  const ys = gf.slice(5, 10).map(Math.log);
  if (q <= ANCHOR_QUOTAS[0]) return ys[0] + Math.log(ANCHOR_QUOTAS[0] / q);
  for (let i = 1; i < ANCHOR_QUOTAS.length; i++) {
    if (q <= ANCHOR_QUOTAS[i] + 1e-9) {
      const w = (q - ANCHOR_QUOTAS[i - 1]) / (ANCHOR_QUOTAS[i] - ANCHOR_QUOTAS[i - 1]);
      return ys[i - 1] * (1 - w) + ys[i] * w;
    }
  }
  return ys[ys.length - 1];
}

/** The model's pooled vector: static (70) then runtime (11). */
export function modelVector(g: Graph): number[] {
  const nf = g.node_features;
  const n = nf.length;
  const mean = (lo: number, hi: number) => Array.from({ length: hi - lo }, (_, k) => nf.reduce((a, r) => a + r[lo + k], 0) / n);
  const logSum = (lo: number, hi: number) => Array.from({ length: hi - lo }, (_, k) => Math.log1p(nf.reduce((a, r) => a + Math.abs(r[lo + k]), 0)));
  const gf = g.graph_features;
  return [...mean(0, 32), ...logSum(0, 32), ...gf.slice(0, 5).map((v) => Math.log1p(Math.abs(v))), Math.log(n), ...mean(32, 38), ...gf.slice(5, 10)
    .map((v) => Math.log1p(Math.abs(v)))];
}

/** One feature row: the model's vector, the configuration, ln(anchor at q). */
export function featureRow(g: Graph, vec: readonly number[], batch: number, smShare: number, quota: number): number[] {
  return [...vec, batch, smShare, quota, Math.log(batch), Math.log(smShare), Math.log(quota), lnAnchor(g.graph_features, quota)];
}
