/**
 * Static features of a model from its own ONNX file (issue 12), read with a maintained ONNX
 * protobuf reader (`onnx-proto`), so the platform can predict latency for a model it has never run:
 * operator counts by type, parameters, FLOPs and activation bytes at batch 1 (shapes inferred by
 * onnx-shapes.ts; a symbolic dimension counts as 1), graph depth. Pure but for the file read.
 */
import { readFileSync } from 'node:fs';
import { onnx } from 'onnx-proto';
import { inferShapes, int, prod, toNum as num } from './onnx-shapes';

/** Operator types counted one by one (the rest count as `other`). */
export const OP_TYPES = [
  'Conv', 'ConvTranspose', 'Gemm', 'MatMul', 'Relu', 'Clip', 'Sigmoid', 'HardSigmoid', 'HardSwish', 'Mul', 'Add',
  'BatchNormalization', 'MaxPool', 'AveragePool', 'GlobalAveragePool', 'Concat', 'Reshape', 'Flatten', 'Transpose',
  'Softmax', 'LayerNormalization', 'Erf', 'Split', 'Slice', 'Pad', 'ReduceMean',
] as const;

export interface GraphFeatures {
  nodes: number;
  /** Count per OP_TYPES entry, in that order, then `other`. */
  ops: number[];
  params: number;
  /** Multiply-adds × 2 of Conv, ConvTranspose, Gemm and MatMul at batch 1. */
  flops: number;
  /** Σ elements of every node output whose shape is known, × 4 bytes. */
  activationBytes: number;
  /** Longest chain of nodes from an input. */
  depth: number;
  /** Share of node outputs with a known shape (how much of flops/bytes could be counted). */
  shapesKnown: number;
}

/** TensorProto data types: FLOAT, FLOAT16, DOUBLE, BFLOAT16. */
const FLOAT_TYPES = new Set([1, 10, 11, 16]);

/** FLOPs (2 × multiply-adds) of one node, 0 when its shapes are unknown or it is not a product. */
function nodeFlops(n: onnx.INodeProto, sh: Map<string, number[]>): number {
  const out = sh.get(n.output?.[0] ?? '');
  if (!out) return 0;
  if (n.opType === 'Conv' || n.opType === 'ConvTranspose') {
    const w = sh.get(n.input?.[1] ?? '');
    if (!w || w.length < 3) return 0;
    // Conv: weight [Cout, Cin/group, k...], each output element takes Cin/group·Πk multiply-adds;
    // ConvTranspose: weight [Cin, Cout/group, k...], each input element feeds Cout/group·Πk
    const each = prod(w.slice(1));
    if (n.opType === 'Conv') return 2 * prod(out) * each;
    const x = sh.get(n.input?.[0] ?? '');
    return x ? 2 * prod(x) * each : 0;
  }
  if (n.opType === 'Gemm' || n.opType === 'MatMul') {
    const a = sh.get(n.input?.[0] ?? '');
    if (!a || a.length === 0) return 0;
    const transA = n.opType === 'Gemm' && int(n, 'transA', 0) === 1;
    const k = transA ? a[a.length - 2] ?? 1 : a[a.length - 1];
    return 2 * prod(out) * k;
  }
  return 0;
}

/** Features of a parsed model. */
export function graphFeatures(model: onnx.IModelProto): GraphFeatures {
  const g = model.graph;
  if (!g) throw new Error('ONNX model has no graph');
  const nodes = g.node ?? [];
  const sh = inferShapes(g);
  const ops = new Array(OP_TYPES.length + 1).fill(0);
  let flops = 0;
  let bytes = 0;
  let known = 0;
  const depthOf = new Map<string, number>();
  let depth = 0;
  for (const n of nodes) {
    const i = (OP_TYPES as readonly string[]).indexOf(n.opType ?? '');
    ops[i >= 0 ? i : OP_TYPES.length]++;
    flops += nodeFlops(n, sh);
    for (const o of n.output ?? []) {
      const s = sh.get(o);
      if (s) {
        bytes += 4 * prod(s);
        known++;
      }
    }
    // nodes are topologically sorted in a valid ONNX graph
    const d = 1 + Math.max(0, ...(n.input ?? []).map((x) => depthOf.get(x) ?? 0));
    for (const o of n.output ?? []) depthOf.set(o, d);
    depth = Math.max(depth, d);
  }
  // weights: floating-point initializers (integer ones are shapes and indices)
  const params = (g.initializer ?? []).filter((t) => FLOAT_TYPES.has(t.dataType ?? 1)).reduce((a, t) => a + prod((t.dims ?? []).map(num)), 0);
  const outputs = nodes.reduce((a, n) => a + (n.output?.length ?? 0), 0);
  return { nodes: nodes.length, ops, params, flops, activationBytes: bytes, depth, shapesKnown: outputs ? known / outputs : 0 };
}

/** Features of an ONNX file; a clear error when it is not one. */
export function onnxFileFeatures(path: string): GraphFeatures {
  let model: onnx.ModelProto;
  try {
    model = onnx.ModelProto.decode(readFileSync(path));
  } catch (e) {
    throw new Error(`${path}: not an ONNX model (${(e as Error).message})`);
  }
  return graphFeatures(model);
}

/** The features as one numeric vector (logs of the magnitudes, op counts as shares of all nodes). */
export function featureVector(f: GraphFeatures): number[] {
  const n = Math.max(1, f.nodes);
  return [Math.log1p(f.nodes), ...f.ops.map((c) => c / n), Math.log1p(f.params), Math.log1p(f.flops), Math.log1p(f.activationBytes), Math.log1p(f.depth),
    Math.log1p(f.flops) - Math.log1p(f.params), f.shapesKnown];
}
