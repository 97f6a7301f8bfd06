import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { LatencyPoint } from '../rapp/profile-capability';

/**
 * Readers for `../shared/data/latency/` (no licence: read at run time from the shared folder,
 * never copied into the repository). Default root: $MLFAAS_DATA_DIR or /work/shared/data — the
 * caller passes it; nothing here reads the environment.
 */
export const DEFAULT_DATA_DIR = '/work/shared/data';

/** RaPP V100 labels: per model, latency of one batch at batch × SM % × quota %. */
export function readRapp(dataDir: string, models?: string[]): Record<string, LatencyPoint[]> {
  return readRappFile(join(dataDir, 'latency', 'rapp_v100', 'rapp_latency_bs_sm_quota.csv'), models);
}

/** A file in the RaPP labels' format (model,batch,sm_pct,quota_pct,latency_ms; e.g. a predictor's output). */
export function readRappFile(path: string, models?: string[]): Record<string, LatencyPoint[]> {
  const text = readFileSync(path, 'utf8');
  const want = models ? new Set(models) : undefined;
  const out: Record<string, LatencyPoint[]> = {};
  for (const line of text.split('\n').slice(1)) {
    if (!line) continue;
    const [model, b, sm, q, lat] = line.split(',');
    if (want && !want.has(model)) continue;
    (out[model] ??= []).push({ batch: Number(b), smShare: Number(sm) / 100, quota: Number(q) / 100, latencyMs: Number(lat) });
  }
  if (want) for (const m of want) if (!out[m]) throw new Error(`no RaPP latency data for model "${m}"`);
  return out;
}

/**
 * Dilu MPS profiles (batch × active-thread %; no quota axis): the quota axis is synthesised as
 * latency / quota at quotas 0.1..1 (a time slice of the token window; our assumption, stated).
 */
export function readDiluMps(dataDir: string, model: string): LatencyPoint[] {
  const text = readFileSync(join(dataDir, 'latency', 'dilu_mps', `bs_sm_${model}.csv`), 'utf8');
  const out: LatencyPoint[] = [];
  for (const line of text.split('\n').slice(1)) {
    if (!line.trim()) continue;
    const [b, sm, lat] = line.split(',').map(Number);
    for (let q = 1; q <= 10; q++) out.push({ batch: b, smShare: sm / 100, quota: q / 10, latencyMs: (lat * 1000) / (q / 10) });
  }
  return out;
}
