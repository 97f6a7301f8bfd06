import { writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { featureVector, OP_TYPES, onnxFileFeatures } from '../../../autoscaler/rapp/onnx-features';

/** test/fixtures/rapp/tiny-cnn.onnx (bench/rapp/make_test_model.py): [n,3,8,8] → Conv 3→4 k3 → Relu → Conv 4→4 k3 groups 2 → GAP → Flatten → Gemm 4→2. */
const CNN = join(__dirname, '..', '..', 'fixtures', 'rapp', 'tiny-cnn.onnx');
const op = (name: (typeof OP_TYPES)[number]) => OP_TYPES.indexOf(name);

describe("features from a model's own ONNX file", () => {
  test('operators, parameters, FLOPs at batch 1 (a symbolic batch counts as 1) and depth', () => {
    const f = onnxFileFeatures(CNN);
    expect(f.nodes).toBe(6);
    expect(f.ops[op('Conv')]).toBe(2);
    expect(f.ops[op('Relu')]).toBe(1);
    expect(f.ops[op('GlobalAveragePool')]).toBe(1);
    expect(f.ops[op('Flatten')]).toBe(1);
    expect(f.ops[op('Gemm')]).toBe(1);
    expect(f.ops.reduce((a, b) => a + b, 0)).toBe(6);
    // 4·3·3·3 + 4, 4·2·3·3 + 4, 2·4 + 2
    expect(f.params).toBe(112 + 76 + 10);
    // 2·(4·8·8)·27 + 2·(4·8·8)·18 + 2·2·4
    expect(f.flops).toBe(13824 + 9216 + 16);
    expect(f.depth).toBe(6);
    expect(f.shapesKnown).toBeGreaterThan(0.99);
    // outputs: 256 + 256 + 256 + 4 + 4 + 2 floats
    expect(f.activationBytes).toBe(4 * (256 * 3 + 4 + 4 + 2));
    const v = featureVector(f);
    expect(v).toHaveLength(1 + OP_TYPES.length + 1 + 6);
    expect(v.every(Number.isFinite)).toBe(true);
  });

  test('a file that is not ONNX is a clear error', () => {
    const bad = join(mkdtempSync(join(tmpdir(), 'onnx-')), 'bad.onnx');
    writeFileSync(bad, 'not a model at all, just text \xff\xfe');
    expect(() => onnxFileFeatures(bad)).toThrow(/bad\.onnx: not an ONNX model|has no graph/);
  });
});
