import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { REPO_ROOT } from '../../gateway/config';
import type { ProfilePoint } from '../../gateway/providers/capability-profile';

export interface CpuPrediction {
  points: ProfilePoint[];
  /** The graph's feature vector: pass it back to predict again without parsing the file again. */
  vector: number[];
  /** Time the predictor process took (parse, features, model runs), ms. */
  ms: number;
}

export interface CpuPredictRequest {
  model: string;
  /** The model's feature vector from an earlier answer: the file is not parsed again. */
  vector?: number[];
  batches: number[];
  quotas: number[];
  cores: number;
  anchorMs?: number;
}

const MAIN = join(__dirname, 'predict-cpu-main.ts');

/**
 * The CPU predictor's grid for a model file, in a child process (the ONNX parse and onnxruntime
 * stay off the agent's event loop): from the graph alone, or relative to a measured batch-1 point.
 */
export function predictCpu(req: CpuPredictRequest, timeoutMs = 120_000): Promise<CpuPrediction> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ['-r', 'tsx/cjs', MAIN, JSON.stringify(req)], { cwd: REPO_ROOT, timeout: timeoutMs, maxBuffer: 1 << 22 },
      (err, stdout, stderr) => {
        if (err) return reject(new Error(`latency predictor: ${stderr.trim() || err.message}`));
        try {
          resolve(JSON.parse(stdout.trim().split('\n').pop()!) as CpuPrediction);
        } catch (e) {
          reject(new Error(`latency predictor answered no JSON: ${(e as Error).message}`));
        }
      });
  });
}
