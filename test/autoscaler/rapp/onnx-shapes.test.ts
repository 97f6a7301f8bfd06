import { onnx } from 'onnx-proto';
import { graphFeatures } from '../../../autoscaler/rapp/onnx-features';
import { inferShapes } from '../../../autoscaler/rapp/onnx-shapes';

const INT64 = 7;
const FLOAT = 1;
const tensor = (name: string, dims: number[], dataType = FLOAT, int64Data?: number[]) => ({ name, dims, dataType, ...(int64Data ? { int64Data } : {}) });
const input = (name: string, dims: Array<number | string>) => ({
  name,
  type: { tensorType: { elemType: FLOAT, shape: { dim: dims.map((d) => (typeof d === 'string' ? { dimParam: d } : { dimValue: d })) } } },
});
const node = (opType: string, inputs: string[], output: string, attribute: object[] = []) => ({ opType, input: inputs, output: [output], attribute });

/**
 * [n,8,4,4] → Reshape to [n, -1] with the target computed from the input's own shape
 * (Shape → Gather → Unsqueeze → Concat with a Constant, as torch exports a flatten of a dynamic
 * batch) → MatMul by a [128, 10] weight → Pow by a scalar Constant → Pad by 1 on the last axis.
 */
const model = onnx.ModelProto.fromObject({
  graph: {
    input: [input('x', ['n', 8, 4, 4])],
    initializer: [tensor('w', [128, 10]), tensor('idx0', [], INT64, [0])],
    node: [
      node('Shape', ['x'], 's'),
      node('Gather', ['s', 'idx0'], 'b', [{ name: 'axis', i: 0, type: 2 }]),
      node('Unsqueeze', ['b'], 'b1', [{ name: 'axes', ints: [0], type: 7 }]),
      node('Constant', [], 'minus1', [{ name: 'value', t: tensor('', [1], INT64, [-1]), type: 4 }]),
      node('Concat', ['b1', 'minus1'], 'target', [{ name: 'axis', i: 0, type: 2 }]),
      node('Reshape', ['x', 'target'], 'flat'),
      node('MatMul', ['flat', 'w'], 'y'),
      node('Constant', [], 'two', [{ name: 'value', t: tensor('', [], FLOAT), type: 4 }]),
      node('Pow', ['y', 'two'], 'y2'),
      node('Constant', [], 'pads', [{ name: 'value', t: tensor('', [4], INT64, [0, 0, 0, 1]), type: 4 }]),
      node('Pad', ['y2', 'pads'], 'out'),
    ],
  },
});

describe('shape inference over an ONNX graph', () => {
  test('folds the shape arithmetic of a dynamic flatten, and knows Constant and Pad shapes', () => {
    const sh = inferShapes(model.graph!);
    expect(sh.get('s')).toEqual([4]);
    expect(sh.get('flat')).toEqual([1, 128]);
    expect(sh.get('y')).toEqual([1, 10]);
    expect(sh.get('y2')).toEqual([1, 10]);
    expect(sh.get('out')).toEqual([1, 11]);
  });

  test('so the MatMul behind it is counted: 2 × 1 × 10 × 128 FLOPs', () => {
    const f = graphFeatures(model);
    expect(f.flops).toBe(2 * 10 * 128);
    expect(f.params).toBe(128 * 10); // the int64 index is not a weight
    expect(f.shapesKnown).toBe(1);
  });
});
