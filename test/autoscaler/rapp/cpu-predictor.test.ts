/**
 * The CPU latency predictors the platform ships (autoscaler/rapp/models, trained by
 * bench/rapp/cpu_cv.py --export on bench/rapp/data/cpu-corpus.*): TypeScript builds the same
 * feature rows as Python and onnxruntime-node gives Python's predictions; the predictor process
 * the agent runs (predict-cpu-main.ts) answers a grid for an ONNX file it has never seen.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CPU_META, cpuFeatureRow, pickFeatures } from '../../../autoscaler/rapp/cpu-predictor';
import { modelFile } from '../../../gateway/providers/local/model-file';
import { predictCpu } from '../../../autoscaler/rapp/predict-cpu';

const ROOT = join(__dirname, '..', '..', '..');

describe('CPU latency predictor', () => {
  it('feature rows: the graph vector, the configuration, and (anchored) the measured point and its linear scaling', () => {
    expect(cpuFeatureRow([7, 8], 4, 2, 0.5)).toEqual([7, 8, 4, 2, 0.5, Math.log(4), Math.log(2), Math.log(0.5)]);
    const r = cpuFeatureRow([7], 4, 1, 0.25, 10);
    expect(r.slice(-2)).toEqual([Math.log(10), Math.log(160)]);
    expect(() => cpuFeatureRow([7], 1, 1, 1, 0)).toThrow(/anchor latency 0 ms must be positive/);
    // the variants of bench/rapp/cpu_cv.py: none, the first and last six entries, all
    const v = Array.from({ length: 34 }, (_, i) => i);
    expect(pickFeatures(v, 'config')).toEqual([]);
    expect(pickFeatures(v, 'graph')).toEqual([0, 28, 29, 30, 31, 32, 33]);
    expect(pickFeatures(v, 'all')).toEqual(v);
    expect(cpuFeatureRow(v, 2, 1, 1, 5, 'config')).toEqual([2, 1, 1, Math.log(2), 0, 0, Math.log(5), Math.log(10)]);
  });

  it("onnxruntime-node on TypeScript's rows gives Python's predictions", () => {
    const meta = JSON.parse(readFileSync(CPU_META, 'utf8')) as { rows: unknown[]; predictions: { 'cpu-latency': number[]; 'cpu-latency-static': number[] } };
    const want = { rows: meta.rows, ...meta.predictions };
    const text = execFileSync(process.execPath, ['--import', 'tsx', join(__dirname, 'cpu-predict-child.ts')], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
    const got = JSON.parse(text.trim().split('\n').pop()!) as { anchored: number[]; graphOnly: number[] };
    expect(want.rows.length).toBeGreaterThanOrEqual(32);
    expect(got.anchored).toHaveLength(want.rows.length);
    got.anchored.forEach((y, i) => expect(Math.abs(y / want['cpu-latency'][i] - 1)).toBeLessThan(1e-3));
    got.graphOnly.forEach((y, i) => expect(Math.abs(y / want['cpu-latency-static'][i] - 1)).toBeLessThan(1e-3));
  }, 60000);

  it('the predictor process answers a whole grid for a model it never saw, graph-only and from a measured point', async () => {
    const model = join(ROOT, 'test', 'fixtures', 'rapp', 'tiny-cnn.onnx');
    const grid = { model, batches: [1, 2, 4, 8], quotas: [1, 0.5, 0.25], cores: 1 };
    const g = await predictCpu(grid);
    const a = await predictCpu({ ...grid, anchorMs: 3 });
    // given the features it answered with, the file is not needed again
    const again = await predictCpu({ ...grid, model: join(ROOT, 'missing.onnx'), vector: g.vector, anchorMs: 3 });
    expect(again.points).toEqual(a.points);
    for (const p of [...g.points, ...a.points]) {
      expect(p.latencyMs).toBeGreaterThan(0);
      expect(p.smShare).toBe(1);
    }
    expect(g.points).toHaveLength(12);
    expect(a.points).toHaveLength(12);
    // relative to the measured point: it says about that point what was measured (it is a test
    // row's neighbour, not an input it copies), and batch 8 at a quarter core costs more
    const at = (pts: typeof a.points, b: number, q: number) => pts.find((p) => p.batch === b && p.quota === q)!.latencyMs;
    expect(at(a.points, 1, 1) / 3).toBeGreaterThan(0.5);
    expect(at(a.points, 1, 1) / 3).toBeLessThan(2);
    expect(at(a.points, 8, 0.25)).toBeGreaterThan(at(a.points, 1, 1));
    await expect(predictCpu({ ...grid, model: join(ROOT, 'package.json') })).rejects.toThrow(/latency predictor: /);
    // past the corpus's largest batch (8) the trend of the last doubling continues, never faster
    const big = await predictCpu({ ...grid, batches: [4, 8, 16, 32], anchorMs: 3 });
    for (const q of grid.quotas) {
      const [l4, l8, l16, l32] = [4, 8, 16, 32].map((b) => at(big.points, b, q));
      const g = Math.max(1, l8 / l4);
      expect(l16 / (l8 * g)).toBeCloseTo(1, 2);
      expect(l32 / (l8 * g * g)).toBeCloseTo(1, 2);
    }
  }, 60000);

  it("finds the function's ONNX file in its image, never one outside it", () => {
    const img = mkdtempSync(join(tmpdir(), 'mlfaas-modelfile-'));
    try {
      mkdirSync(join(img, 'function', 'm'), { recursive: true });
      copyFileSync(join(ROOT, 'test', 'fixtures', 'rapp', 'tiny-cnn.onnx'), join(img, 'function', 'model.onnx'));
      copyFileSync(join(ROOT, 'test', 'fixtures', 'rapp', 'tiny-cnn.onnx'), join(img, 'outside.onnx'));
      symlinkSync(join(img, 'outside.onnx'), join(img, 'function', 'm', 'link.onnx'));
      expect(modelFile(img, {})).toBe(join(img, 'function', 'model.onnx'));
      expect(modelFile(img, { MODEL_PATH: 'model.onnx' })).toBe(join(img, 'function', 'model.onnx'));
      expect(modelFile(img, { MODEL_PATH: '../outside.onnx' })).toBeUndefined();
      expect(modelFile(img, { MODEL_PATH: 'm/link.onnx' })).toBeUndefined();
      expect(modelFile(img, { MODEL_PATH: 'missing.onnx' })).toBeUndefined();
      expect(modelFile(undefined, {})).toBeUndefined();
    } finally {
      rmSync(img, { recursive: true, force: true });
    }
  });
});
