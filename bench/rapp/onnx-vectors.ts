/**
 * Feature vectors of every ONNX file in a folder, as the platform extracts them from a deployed
 * function's model (autoscaler/rapp/onnx-features.ts), written as JSON { name: number[] } for
 * bench/rapp/v100_cv.py --onnx-features. Usage: tsx bench/rapp/onnx-vectors.ts DIR OUT.json
 */
import { readdirSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { featureVector, onnxFileFeatures } from '../../autoscaler/rapp/onnx-features';

const [dir, out] = process.argv.slice(2);
if (!dir || !out) {
  console.error('usage: tsx bench/rapp/onnx-vectors.ts DIR OUT.json');
  process.exit(2);
}
const vectors: Record<string, number[]> = {};
for (const f of readdirSync(dir).filter((x) => x.endsWith('.onnx')).sort()) vectors[basename(f, '.onnx')] = featureVector(onnxFileFeatures(join(dir, f)));
writeFileSync(out, JSON.stringify(vectors));
console.log(`${Object.keys(vectors).length} models → ${out}`);
