/**
 * The CPU latency predictor as the local agent sees it: a port defined on the gateway side,
 * implemented by the autoscaler's RaPP predictor (`rappCpuPredictor`, injected at the composition root).
 */
import type { ProfilePoint } from '../providers/capability-profile';

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

export interface CpuPredictor {
  /** True where the predictor's models ship: the agent then predicts CPU profiles by default. */
  available(): boolean;
  /** The predicted grid for a model file (in a child process, off the agent's event loop). */
  predict(req: CpuPredictRequest): Promise<CpuPrediction>;
}
