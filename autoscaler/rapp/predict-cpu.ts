import { execFile } from 'node:child_process';
import { existsSync, realpathSync } from 'node:fs';
import { join, relative } from 'node:path';
import { REPO_ROOT } from '../../config';
import type { ProfilePoint } from '../../../node-runtime/profiler';

export interface CpuPrediction {
  points: ProfilePoint[];
  /** The graph's feature vector: pass it back to predict again without parsing the file again. */
  vector: number[];
  /** Time the predictor process took (parse, features, model runs), ms. */
  ms: number;
}

const MAIN = join(REPO_ROOT, 'autoscaler/rapp/predict-cpu-main.ts');

export interface CpuPredictRequest {
  model: string;
  /** The model's feature vector from an earlier answer: the file is not parsed again. */
  vector?: number[];
  batches: number[];
  quotas: number[];
  cores: number;
  anchorMs?: number;
}

/**
 * The CPU predictor's grid for a model file, in a child process (the ONNX parse and onnxruntime
 * stay off the agent's event loop): from the graph alone, or relative to a measured batch-1 point.
 */
export function predictCpu(req: CpuPredictRequest, timeoutMs = 120_000): Promise<CpuPrediction> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ['-r', 'tsx/cjs', MAIN, JSON.stringify(req)], { cwd: REPO_ROOT, timeout: timeoutMs, maxBuffer: 1 << 22 }, (err, stdout, stderr) => {
      if (err) return reject(new Error(`latency predictor: ${stderr.trim() || err.message}`));
      try {
        resolve(JSON.parse(stdout.trim().split('\n').pop()!) as CpuPrediction);
      } catch (e) {
        reject(new Error(`latency predictor answered no JSON: ${(e as Error).message}`));
      }
    });
  });
}

/**
 * The function's ONNX file in its image (`function/` + `MODEL_PATH`, default model.onnx), or
 * undefined when there is none or the path leads out of the image (a link, `..`).
 */
export function modelFile(imageDir: string | undefined, env: Record<string, string> | undefined): string | undefined {
  if (!imageDir) return undefined;
  const fn = join(imageDir, 'function');
  const file = join(fn, env?.MODEL_PATH ?? 'model.onnx');
  if (!file.endsWith('.onnx') || !existsSync(file)) return undefined;
  const rel = relative(realpathSync(fn), realpathSync(file));
  return rel && !rel.startsWith('..') && !rel.startsWith('/') ? file : undefined;
}
