/**
 * The gateway's check of an Open Inference Protocol infer request before it is queued: the
 * envelope only (what needs no model), so a malformed body is a 400 naming its field at once and
 * never takes a replica slot. Names, shapes and datatypes against the model, and `outputs` naming
 * outputs the model lacks, are the runtime's to judge (it answers 400 too). Pure.
 *
 * JSON body: `{ id?, parameters?, inputs: [{ name, shape, datatype, parameters?, data }], outputs?: [{ name, parameters? }] }`.
 * Binary tensor extension: `Inference-Header-Content-Length: N`; the first N bytes are the JSON,
 * then each input with `parameters.binary_data_size` has that many raw bytes, in input order.
 */
import { invalid } from '../errors';

/** Bytes per element of each datatype; BYTES is variable (0 here). */
export const V2_DATATYPES: Record<string, number> = {
  BOOL: 1, INT8: 1, INT16: 2, INT32: 4, INT64: 8, UINT8: 1, UINT16: 2, UINT32: 4, UINT64: 8, FP16: 2, FP32: 4, FP64: 8, BYTES: 0,
};

const INT_RANGE: Record<string, [number, number]> = {
  INT8: [-128, 127], INT16: [-32768, 32767], INT32: [-(2 ** 31), 2 ** 31 - 1], INT64: [-(2 ** 63), 2 ** 63],
  UINT8: [0, 255], UINT16: [0, 65535], UINT32: [0, 2 ** 32 - 1], UINT64: [0, 2 ** 64],
};

/** Bounds of an envelope: tensors per request, rank, and nesting of `data`. */
export const V2_BOUNDS = { tensors: 1024, rank: 32 } as const;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** What the check learned: the JSON header's length (the whole body when not binary). */
export interface CheckedInfer {
  headerLength: number;
  inputs: number;
}

/** Throws a 400 naming the field; returns a summary when the envelope is well formed. */
export function checkInferRequest(body: Buffer, headerLengthRaw: string | string[] | undefined): CheckedInfer {
  let headerLength = body.length;
  if (headerLengthRaw !== undefined) {
    const raw = Array.isArray(headerLengthRaw) ? headerLengthRaw.join(',') : headerLengthRaw;
    if (!/^\d{1,15}$/.test(raw.trim())) throw invalid('Inference-Header-Content-Length', `"${raw}" is not a byte count`);
    headerLength = Number(raw.trim());
    if (headerLength > body.length) {
      throw invalid('Inference-Header-Content-Length', `${headerLength} exceeds the body's ${body.length} bytes`);
    }
  }
  let doc: unknown;
  try {
    doc = JSON.parse(body.subarray(0, headerLength).toString('utf8'));
  } catch (e) {
    throw invalid('body', `not valid JSON: ${(e as Error).message}`);
  }
  if (!isObject(doc)) throw invalid('body', 'must be a JSON object');
  if (doc.id !== undefined && typeof doc.id !== 'string') throw invalid('id', 'must be a string');
  if (doc.parameters !== undefined && !isObject(doc.parameters)) throw invalid('parameters', 'must be an object');
  if (!Array.isArray(doc.inputs)) throw invalid('inputs', doc.inputs === undefined ? 'is required' : 'must be an array');
  if (doc.inputs.length === 0) throw invalid('inputs', 'must name at least one input');
  if (doc.inputs.length > V2_BOUNDS.tensors) throw invalid('inputs', `more than ${V2_BOUNDS.tensors} inputs`);
  const binary = body.subarray(headerLength);
  let offset = 0;
  const names = new Set<string>();
  doc.inputs.forEach((t: unknown, i: number) => {
    offset += checkInput(t, `inputs[${i}]`, names, binary, offset, body.length);
  });
  if (offset !== binary.length) {
    const why = `the body has ${binary.length} bytes after the JSON header, the inputs' binary_data_size add up to ${offset}`;
    throw invalid('Inference-Header-Content-Length', why);
  }
  if (doc.outputs !== undefined) checkOutputs(doc.outputs);
  return { headerLength, inputs: doc.inputs.length };
}

/** Checks one input; returns its binary_data_size (0 when its data is in the JSON). */
function checkInput(t: unknown, f: string, names: Set<string>, binary: Buffer, offset: number, bodyBytes: number): number {
  if (!isObject(t)) throw invalid(f, 'must be an object');
  if (typeof t.name !== 'string' || t.name === '') throw invalid(`${f}.name`, 'must be a non-empty string');
  if (names.has(t.name)) throw invalid(`${f}.name`, `input "${t.name}" is given twice`);
  names.add(t.name);
  if (typeof t.datatype !== 'string') throw invalid(`${f}.datatype`, 'must be a string');
  const width = V2_DATATYPES[t.datatype];
  if (width === undefined) throw invalid(`${f}.datatype`, `"${t.datatype}" is not one of ${Object.keys(V2_DATATYPES).join(', ')}`);
  const elements = checkShape(t.shape, `${f}.shape`);
  if (t.parameters !== undefined && !isObject(t.parameters)) throw invalid(`${f}.parameters`, 'must be an object');
  const size = t.parameters?.binary_data_size;
  if (size === undefined && t.data === undefined) throw invalid(`${f}.data`, 'is required (or parameters.binary_data_size with the binary extension)');
  // every element takes at least one byte of the body (a digit, or a bit of the binary region)
  if (elements > bodyBytes) {
    throw invalid(`${f}.shape`, `${JSON.stringify(t.shape)} has ${elements} elements, more than a ${bodyBytes}-byte body can carry`);
  }
  if (size !== undefined) {
    const sf = `${f}.parameters.binary_data_size`;
    if (typeof size !== 'number' || !Number.isInteger(size) || size < 0) throw invalid(sf, 'must be a non-negative integer');
    if (t.data !== undefined) throw invalid(`${f}.data`, 'must be absent when binary_data_size is given');
    if (offset + size > binary.length) throw invalid(sf, `${size} bytes from offset ${offset} run past the body's ${binary.length} binary bytes`);
    if (width > 0 && size !== elements * width) {
      throw invalid(sf, `${size} bytes, but shape ${JSON.stringify(t.shape)} of ${t.datatype} needs ${elements * width}`);
    }
    if (width === 0) checkBinaryBytes(binary.subarray(offset, offset + size), elements, sf);
    return size;
  }
  const n = checkData(t.data, t.datatype, `${f}.data`, elements);
  if (n !== elements) throw invalid(`${f}.data`, `shape ${JSON.stringify(t.shape)} has ${elements} elements, data has ${n}`);
  return 0;
}

/** A shape: non-negative integers; returns the element count. */
function checkShape(shape: unknown, f: string): number {
  if (!Array.isArray(shape)) throw invalid(f, 'must be an array of non-negative integers');
  if (shape.length > V2_BOUNDS.rank) throw invalid(f, `rank ${shape.length} exceeds ${V2_BOUNDS.rank}`);
  let n = 1;
  for (const d of shape) {
    if (typeof d !== 'number' || !Number.isInteger(d) || d < 0) throw invalid(f, `${JSON.stringify(d)} is not a non-negative integer`);
    n *= d;
  }
  return n;
}

/** Counts the elements of `data` (flat or nested arrays), checking each against the datatype. */
function checkData(data: unknown, datatype: string, f: string, limit: number): number {
  if (!Array.isArray(data)) throw invalid(f, 'must be an array');
  const range = INT_RANGE[datatype];
  let count = 0;
  const stack: Array<{ a: unknown[]; depth: number }> = [{ a: data, depth: 1 }];
  while (stack.length > 0) {
    const { a, depth } = stack.pop()!;
    for (const v of a) {
      if (Array.isArray(v)) {
        if (depth >= V2_BOUNDS.rank) throw invalid(f, `nested deeper than ${V2_BOUNDS.rank}`);
        stack.push({ a: v, depth: depth + 1 });
        continue;
      }
      if (++count > limit) throw invalid(f, `more elements than the shape's ${limit}`);
      if (!elementOk(v, datatype, range)) throw invalid(f, `${JSON.stringify(v)} is not a ${datatype} value`);
    }
  }
  return count;
}

function elementOk(v: unknown, datatype: string, range: [number, number] | undefined): boolean {
  if (datatype === 'BYTES') return typeof v === 'string';
  if (datatype === 'BOOL') return typeof v === 'boolean' || v === 0 || v === 1;
  if (typeof v !== 'number') return false;
  if (!range) return true; // FP16 / FP32 / FP64: any JSON number
  return Number.isInteger(v) && v >= range[0] && v <= range[1];
}

/** BYTES in the binary region: each element a 4-byte little-endian length, then that many bytes, exactly. */
function checkBinaryBytes(b: Buffer, elements: number, f: string): void {
  let at = 0;
  let n = 0;
  while (at < b.length) {
    if (at + 4 > b.length) throw invalid(f, `element ${n}'s 4-byte length runs past the ${b.length} bytes`);
    const len = b.readUInt32LE(at);
    at += 4 + len;
    if (at > b.length) throw invalid(f, `element ${n} declares ${len} bytes, past the ${b.length} bytes`);
    n++;
  }
  if (n !== elements) throw invalid(f, `${n} length-prefixed BYTES elements, the shape has ${elements}`);
}

function checkOutputs(outputs: unknown): void {
  if (!Array.isArray(outputs)) throw invalid('outputs', 'must be an array');
  if (outputs.length > V2_BOUNDS.tensors) throw invalid('outputs', `more than ${V2_BOUNDS.tensors} outputs`);
  const seen = new Set<string>();
  outputs.forEach((o: unknown, j: number) => {
    const f = `outputs[${j}]`;
    if (!isObject(o)) throw invalid(f, 'must be an object');
    if (typeof o.name !== 'string' || o.name === '') throw invalid(`${f}.name`, 'must be a non-empty string');
    if (seen.has(o.name)) throw invalid(`${f}.name`, `output "${o.name}" is requested twice`);
    seen.add(o.name);
    if (o.parameters !== undefined && !isObject(o.parameters)) throw invalid(`${f}.parameters`, 'must be an object');
  });
}
