/**
 * The CPU predictor as a short-lived process (`node -r tsx/cjs predict-cpu-main.ts REQUEST-JSON`):
 * reads the model's ONNX file (up to hundreds of MB: parsed here, never on the agent's event
 * loop), builds its feature vector and prints the predicted grid as one JSON line
 * `{"points": [...], "vector": [...], "ms": <time>}`. REQUEST-JSON: {model, vector?, batches, quotas,
 * cores, anchorMs?}; with `vector` (from an earlier answer) the file is not read.
 */
import { performance } from 'node:perf_hooks';
import { CPU_MODEL, CPU_STATIC_MODEL, predictCpuProfile, readCpuMeta } from './cpu-predictor';
import { LatencyModel } from './latency-model';
import { featureVector, onnxFileFeatures } from './onnx-features';

async function main(): Promise<void> {
  const t0 = performance.now();
  const req = JSON.parse(process.argv[2] ?? '') as { model: string; vector?: number[]; batches: number[]; quotas: number[]; cores: number; anchorMs?: number };
  const vector = req.vector ?? featureVector(onnxFileFeatures(req.model));
  const anchored = req.anchorMs !== undefined;
  const net = await LatencyModel.load(anchored ? CPU_MODEL : CPU_STATIC_MODEL);
  const variant = readCpuMeta().variants[anchored ? 'cpu-latency' : 'cpu-latency-static'];
  const points = await predictCpuProfile(net, vector, req, req.anchorMs, variant);
  process.stdout.write(`${JSON.stringify({ points, vector, ms: Math.round(performance.now() - t0) })}\n`);
}

main().catch((e: Error) => {
  process.stderr.write(`${e.message}\n`);
  process.exit(1);
});
