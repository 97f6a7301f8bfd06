/**
 * Shape propagation over an ONNX graph for the operators that carry a model's cost (issue 12):
 * exporters often record no intermediate shapes (torch.onnx.export does not), so the feature
 * extractor infers them. Symbolic dimensions count as 1 (batch 1). An operator it does not know,
 * or an input it cannot see, leaves its outputs unknown. Pure.
 */
import type { onnx } from 'onnx-proto';

type Long = { toNumber(): number };
export const prod = (xs: readonly number[]) => xs.reduce((a, b) => a * b, 1);
export const toNum = (v: number | Long | null | undefined): number => (v === null || v === undefined ? 0 : typeof v === 'number' ? v : v.toNumber());

export const attrOf = (n: onnx.INodeProto, name: string) => (n.attribute ?? []).find((a) => a.name === name);
const ints = (n: onnx.INodeProto, name: string): number[] | undefined => {
  const a = attrOf(n, name);
  return a?.ints && a.ints.length ? a.ints.map(toNum) : undefined;
};
export const int = (n: onnx.INodeProto, name: string, dflt: number): number => {
  const a = attrOf(n, name);
  return a && a.i !== null && a.i !== undefined ? toNum(a.i) : dflt;
};

/** An int64 tensor's values (int64_data or little-endian raw_data), or undefined. */
function int64s(t: onnx.ITensorProto | null | undefined): number[] | undefined {
  if (t?.int64Data && t.int64Data.length) return t.int64Data.map(toNum);
  if (t?.rawData && t.rawData.length && t.dataType === 7) {
    const b = t.rawData;
    const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
    return Array.from({ length: b.byteLength / 8 }, (_, i) => Number(dv.getBigInt64(i * 8, true)));
  }
  return undefined;
}

/** Values of integer initializers and Constant nodes (Reshape's target shape, reduction axes), by name. */
function intConstants(g: onnx.IGraphProto): Map<string, number[]> {
  const out = new Map<string, number[]>();
  for (const t of g.initializer ?? []) {
    const v = t.name ? int64s(t) : undefined;
    if (v) out.set(t.name!, v);
  }
  for (const n of g.node ?? []) {
    if (n.opType !== 'Constant' || !n.output?.[0]) continue;
    const v = int64s(attrOf(n, 'value')?.t);
    if (v) out.set(n.output[0], v);
  }
  return out;
}

/** Output shape of a windowed operator (Conv, pooling) over the spatial dims of `x`. */
function windowed(n: onnx.INodeProto, x: number[], channels: number, kernel: number[]): number[] {
  const sp = x.length - 2;
  const strides = ints(n, 'strides') ?? new Array(sp).fill(1);
  const dil = ints(n, 'dilations') ?? new Array(sp).fill(1);
  const pads = ints(n, 'pads') ?? new Array(2 * sp).fill(0);
  const auto = attrOf(n, 'auto_pad')?.s;
  const same = auto && new TextDecoder().decode(auto).startsWith('SAME');
  const ceil = int(n, 'ceil_mode', 0) === 1;
  const out = [x[0], channels];
  for (let i = 0; i < sp; i++) {
    const span = dil[i] * (kernel[i] - 1) + 1;
    const r = same ? Math.ceil(x[2 + i] / strides[i]) : (ceil ? Math.ceil : Math.floor)((x[2 + i] + pads[i] + pads[i + sp] - span) / strides[i]) + 1;
    out.push(Math.max(1, r));
  }
  return out;
}

function broadcast(a: number[], b: number[]): number[] {
  const r = Math.max(a.length, b.length);
  return Array.from({ length: r }, (_, i) => Math.max(a[a.length - r + i] ?? 1, b[b.length - r + i] ?? 1));
}

const ELEMENTWISE = new Set(['Relu', 'Clip', 'Sigmoid', 'HardSigmoid', 'HardSwish', 'Tanh', 'Erf', 'Gelu', 'BatchNormalization', 'Dropout', 'Identity',
  'Softmax', 'LayerNormalization', 'LeakyRelu', 'Sqrt', 'Neg', 'Exp', 'Log', 'Cast']);
const BINARY = new Set(['Add', 'Mul', 'Sub', 'Div', 'Pow', 'Max', 'Min', 'Where']);

/** Shapes of every value in the graph that can be inferred: graph inputs, initializers, node outputs. */
export function inferShapes(g: onnx.IGraphProto): Map<string, number[]> {
  const sh = new Map<string, number[]>();
  for (const t of g.initializer ?? []) if (t.name) sh.set(t.name, (t.dims ?? []).map(toNum));
  for (const v of [...(g.input ?? []), ...(g.valueInfo ?? []), ...(g.output ?? [])]) {
    const dims = v.type?.tensorType?.shape?.dim;
    if (v.name && dims && !sh.has(v.name)) sh.set(v.name,
      dims.map((d) => (d.dimValue !== null && d.dimValue !== undefined && toNum(d.dimValue) > 0 ? toNum(d.dimValue) : 1)));
  }
  const consts = intConstants(g);
  for (const n of g.node ?? []) {
    const ins = (n.input ?? []).map((i) => sh.get(i));
    const x = ins[0];
    const set = (s: number[] | undefined) => {
      const o = n.output?.[0];
      if (o && s && !sh.has(o)) sh.set(o, s);
    };
    const op = n.opType ?? '';
    const v = (k: number) => consts.get(n.input?.[k] ?? '');
    const setConst = (c: number[] | undefined) => {
      const o = n.output?.[0];
      if (o && c) consts.set(o, c);
    };
    if (op === 'Constant') set((attrOf(n, 'value')?.t?.dims ?? []).map(toNum));
    // shape arithmetic (Shape → Gather → Unsqueeze → Concat → Reshape) folded to constants
    else if (op === 'Shape' && x) {
      set([x.length]);
      setConst(x);
    } else if (op === 'Gather' && x && ins[1]) {
      const axis = (int(n, 'axis', 0) + x.length) % x.length;
      set([...x.slice(0, axis), ...ins[1], ...x.slice(axis + 1)]);
      const d = v(0);
      const idx = v(1);
      if (d && idx && x.length === 1) setConst(idx.map((i) => d[(i + d.length) % d.length]));
    } else if ((op === 'Unsqueeze' || op === 'Squeeze') && x) {
      const axes = ints(n, 'axes') ?? v(1);
      if (op === 'Unsqueeze' && axes) {
        const r = x.length + axes.length;
        const at = axes.map((a) => (a + r) % r);
        const s2: number[] = [];
        for (let i = 0, j = 0; i < r; i++) s2.push(at.includes(i) ? 1 : x[j++]);
        set(s2);
      } else if (op === 'Squeeze') set(axes ? x.filter((_, i) => !axes.map((a) => (a + x.length) % x.length).includes(i)) : x.filter((d) => d !== 1));
      setConst(v(0));
    } else if (op === 'Cast' && x) {
      set(x);
      setConst(v(0));
    } else if (op === 'Pad' && x) {
      const pads = ints(n, 'pads') ?? v(1);
      if (pads && pads.length === 2 * x.length) set(x.map((d, i) => d + pads[i] + pads[i + x.length]));
    } else if (ELEMENTWISE.has(op)) set(x);
    else if (BINARY.has(op)) set(ins.every(Boolean) ? ins.reduce((a, b) => broadcast(a!, b!))! : undefined);
    else if (op === 'Conv' && x && ins[1]) set(windowed(n, x, ins[1][0], ins[1].slice(2)));
    else if (op === 'ConvTranspose' && x && ins[1]) {
      const sp = x.length - 2;
      const k = ins[1].slice(2);
      const s = ints(n, 'strides') ?? new Array(sp).fill(1);
      const pads = ints(n, 'pads') ?? new Array(2 * sp).fill(0);
      const op2 = ints(n, 'output_padding') ?? new Array(sp).fill(0);
      set([x[0], ins[1][1] * int(n, 'group', 1), ...Array.from({ length: sp }, (_, i) => s[i] * (x[2 + i] - 1) + op2[i] + k[i] - pads[i] - pads[i + sp])]);
    } else if ((op === 'MaxPool' || op === 'AveragePool') && x) set(windowed(n, x, x[1], ints(n, 'kernel_shape') ?? []));
    else if ((op === 'GlobalAveragePool' || op === 'GlobalMaxPool') && x) set([x[0], x[1], ...x.slice(2).map(() => 1)]);
    else if (op === 'Flatten' && x) {
      const axis = (int(n, 'axis', 1) + x.length) % x.length;
      set([prod(x.slice(0, axis)), prod(x.slice(axis))]);
    } else if (op === 'Gemm' && x && ins[1]) {
      const m = int(n, 'transA', 0) ? x[1] : x[0];
      const nn = int(n, 'transB', 0) ? ins[1][0] : ins[1][1];
      set([m, nn]);
    } else if (op === 'MatMul' && x && ins[1]) {
      const a = x.length === 1 ? [1, x[0]] : x;
      const b = ins[1].length === 1 ? [ins[1][0], 1] : ins[1];
      set([...broadcast(a.slice(0, -2), b.slice(0, -2)), a[a.length - 2], b[b.length - 1]]);
    } else if (op === 'Concat' && ins.every(Boolean) && x) {
      const axis = (int(n, 'axis', 0) + x.length) % x.length;
      const s = [...x];
      s[axis] = ins.reduce((a, w) => a + w![axis], 0);
      set(s);
      const parts = (n.input ?? []).map((i) => consts.get(i));
      if (x.length === 1 && parts.every(Boolean)) setConst(parts.flatMap((c) => c!));
    } else if (op === 'Reshape' && x) {
      const t = consts.get(n.input?.[1] ?? '');
      if (t) {
        const total = prod(x);
        const s = t.map((v, i) => (v === 0 ? x[i] : v));
        const known = prod(s.filter((v) => v > 0));
        set(s.map((v) => (v < 0 ? Math.max(1, Math.round(total / known)) : v)));
      }
    } else if (op === 'Transpose' && x) {
      const perm = ints(n, 'perm') ?? x.map((_, i) => x.length - 1 - i);
      set(perm.map((p) => x[p]));
    } else if ((op === 'ReduceMean' || op === 'ReduceSum') && x) {
      const axes = (ints(n, 'axes') ?? consts.get(n.input?.[1] ?? '') ?? x.map((_, i) => i)).map((a) => (a + x.length) % x.length);
      const keep = int(n, 'keepdims', 1) === 1;
      set(keep ? x.map((v, i) => (axes.includes(i) ? 1 : v)) : x.filter((_, i) => !axes.includes(i)));
    }
  }
  return sh;
}
