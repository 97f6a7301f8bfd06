/**
 * The shipped CPU predictors in onnxruntime-node on the rows Python sampled at export
 * (autoscaler/rapp/models/cpu-latency.json), feature rows built in TypeScript: prints
 * `{"anchored": [...], "graphOnly": [...]}` (ms). Run outside the test runner (latency-model.ts).
 */
import { readFileSync } from 'node:fs';
import { CPU_META, CPU_MODEL, CPU_STATIC_MODEL, cpuFeatureRow, readCpuMeta } from '../../../autoscaler/rapp/cpu-predictor';
import { LatencyModel } from '../../../autoscaler/rapp/latency-model';

async function main(): Promise<void> {
  const s = JSON.parse(readFileSync(CPU_META, 'utf8')) as { rows: Array<[string, number, number, number, number]>; vectors: Record<string, number[]> };
  const { variants } = readCpuMeta();
  const anchored = await LatencyModel.load(CPU_MODEL);
  const graphOnly = await LatencyModel.load(CPU_STATIC_MODEL);
  const a = await anchored.predictMs(s.rows.map(([m, c, q, b, anchor]) => cpuFeatureRow(s.vectors[m], b, c, q, anchor, variants['cpu-latency'])));
  const g = await graphOnly.predictMs(s.rows.map(([m, c, q, b]) => cpuFeatureRow(s.vectors[m], b, c, q, undefined, variants['cpu-latency-static'])));
  console.log(JSON.stringify({ anchored: Array.from(a), graphOnly: Array.from(g) }));
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
