/**
 * Tiny ONNX models built in the test with onnx-proto (no Python, no downloads), written to a
 * temporary folder: each exercises one thing the ml-inference runtime must serve (issue 25).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { onnx } from 'onnx-proto';

/** ONNX TensorProto.DataType per Open Inference Protocol datatype. */
export const ELEM: Record<string, number> = {
  FP32: 1, UINT8: 2, INT8: 3, UINT16: 4, INT16: 5, INT32: 6, INT64: 7, BYTES: 8, BOOL: 9, FP16: 10, FP64: 11, UINT32: 12, UINT64: 13,
};

type Dim = number | string | null;
const valueInfo = (name: string, elemType: number, dims: Dim[]) => ({
  name,
  type: { tensorType: { elemType, shape: { dim: dims.map((d) => (d === null ? {} : typeof d === 'string' ? { dimParam: d } : { dimValue: d })) } } },
});
const node = (opType: string, input: string[], output: string[], attribute: object[] = []) => ({ opType, input, output, attribute });

function write(dir: string, file: string, graph: object): string {
  const model = onnx.ModelProto.fromObject({ irVersion: 8, opsetImport: [{ version: 17 }], producerName: 'mlfaas-test', graph });
  const p = path.join(dir, file);
  fs.writeFileSync(p, onnx.ModelProto.encode(model).finish());
  return p;
}

export function tmpDir(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'mlfaas-onnx-'));
}

/** x_<DT> [b, ?] → y_<DT> = Identity, for every datatype: batchable along 'b'. */
export function identityAll(dir: string): string {
  const types = Object.keys(ELEM);
  return write(dir, 'identity-all.onnx', {
    input: types.map((t) => valueInfo(`x_${t}`, ELEM[t], ['b', null])),
    output: types.map((t) => valueInfo(`y_${t}`, ELEM[t], ['b', null])),
    node: types.map((t) => node('Identity', [`x_${t}`], [`y_${t}`])),
  });
}

/** input_ids, attention_mask: INT64 [batch, seq] → sum = input_ids + attention_mask [batch, seq], count = ReduceSum(mask, axis 1) [batch]. */
export function seqModel(dir: string): string {
  return write(dir, 'seq.onnx', {
    input: [valueInfo('input_ids', ELEM.INT64, ['batch', 'seq']), valueInfo('attention_mask', ELEM.INT64, ['batch', 'seq'])],
    output: [valueInfo('sum', ELEM.INT64, ['batch', 'seq']), valueInfo('count', ELEM.INT64, ['batch'])],
    initializer: [{ name: 'axis1', dims: [1], dataType: ELEM.INT64, int64Data: [1] }],
    node: [
      node('Add', ['input_ids', 'attention_mask'], ['sum']),
      node('ReduceSum', ['attention_mask', 'axis1'], ['count'], [{ name: 'keepdims', i: 0, type: 2 }]),
    ],
  });
}

/** x: FP32 [3] → y = x * 2 [3]: no batch axis at all. */
export function noBatchModel(dir: string): string {
  return write(dir, 'nobatch.onnx', {
    input: [valueInfo('x', ELEM.FP32, [3])],
    output: [valueInfo('y', ELEM.FP32, [3])],
    initializer: [{ name: 'two', dims: [], dataType: ELEM.FP32, floatData: [2] }],
    node: [node('Mul', ['x', 'two'], ['y'])],
  });
}

/** x: FP32 [1, 4] → y = -x [1, 4]: axis 0 fixed at 1. */
export function fixedOneModel(dir: string): string {
  return write(dir, 'fixed1.onnx', {
    input: [valueInfo('x', ELEM.FP32, [1, 4])],
    output: [valueInfo('y', ELEM.FP32, [1, 4])],
    node: [node('Neg', ['x'], ['y'])],
  });
}

/** ids: INT64 [n] → rows of a [5, 2] table (Gather): an id past 4 makes onnxruntime fail. */
export function gatherModel(dir: string): string {
  return write(dir, 'gather.onnx', {
    input: [valueInfo('ids', ELEM.INT64, ['n'])],
    output: [valueInfo('rows', ELEM.FP32, ['n', 2])],
    initializer: [{ name: 'table', dims: [5, 2], dataType: ELEM.FP32, floatData: [0, 1, 10, 11, 20, 21, 30, 31, 40, 41] }],
    node: [node('Gather', ['table', 'ids'], ['rows'], [{ name: 'axis', i: 0, type: 2 }])],
  });
}

/** x: FP32 [b, 4] → total = ReduceSum over everything (a scalar): axis 0 is dynamic but not a batch axis. */
export function reduceAllModel(dir: string): string {
  return write(dir, 'reduce.onnx', {
    input: [valueInfo('x', ELEM.FP32, ['b', 4])],
    output: [valueInfo('total', ELEM.FP32, [])],
    node: [node('ReduceSum', ['x'], ['total'], [{ name: 'keepdims', i: 0, type: 2 }])],
  });
}

/** a, b: FP32 [2, 3] → c = a + b [2, 3]: two inputs, axis 0 fixed at 2. */
export function fixedTwoModel(dir: string): string {
  return write(dir, 'fixed2.onnx', {
    input: [valueInfo('a', ELEM.FP32, [2, 3]), valueInfo('b', ELEM.FP32, [2, 3])],
    output: [valueInfo('c', ELEM.FP32, [2, 3])],
    node: [node('Add', ['a', 'b'], ['c'])],
  });
}

/** A gate whose first acquire waits for open(); `held` resolves once that first acquire came. */
export function heldGate() {
  let open!: () => void;
  const opened = new Promise<void>((r) => (open = r));
  let seen!: () => void;
  const held = new Promise<void>((r) => (seen = r));
  let first = true;
  return {
    open, held, acquires: 0,
    async acquire() {
      this.acquires += 1;
      if (first) {
        first = false;
        seen();
        await opened;
      }
    },
    release() { /* nothing */ },
  };
}
