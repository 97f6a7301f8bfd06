// @ts-check
'use strict';
/**
 * Tensor datatypes: the Open Inference Protocol's names (KServe v2) and their ONNX Runtime
 * types, the typed array that holds each, and conversion to and from JSON values. The ONE place
 * that maps between the two (contract.md, issue 25).
 *
 * A tensor in the runtime: `{ datatype, shape, data }`, data row-major in `arrayFor(datatype)`'s
 * kind: INT64 → BigInt64Array, UINT64 → BigUint64Array, FP16 → Uint16Array (IEEE half bits),
 * BOOL → Uint8Array (0/1), BYTES → string[] or Buffer[].
 */

/** @typedef {'BOOL'|'INT8'|'INT16'|'INT32'|'INT64'|'UINT8'|'UINT16'|'UINT32'|'UINT64'|'FP16'|'FP32'|'FP64'|'BYTES'} Datatype */
/** @typedef {Int8Array|Int16Array|Int32Array|BigInt64Array|Uint8Array|Uint16Array|Uint32Array|BigUint64Array|Float32Array|Float64Array} NumericArray */
/** @typedef {NumericArray | string[] | Buffer[]} TensorData */
/** @typedef {{ datatype: Datatype, shape: number[], data: TensorData }} Tensor */

/** @type {Record<Datatype, { ort: string, ctor: any, bytes: number }>} */
const TABLE = {
  BOOL: { ort: 'bool', ctor: Uint8Array, bytes: 1 },
  INT8: { ort: 'int8', ctor: Int8Array, bytes: 1 },
  INT16: { ort: 'int16', ctor: Int16Array, bytes: 2 },
  INT32: { ort: 'int32', ctor: Int32Array, bytes: 4 },
  INT64: { ort: 'int64', ctor: BigInt64Array, bytes: 8 },
  UINT8: { ort: 'uint8', ctor: Uint8Array, bytes: 1 },
  UINT16: { ort: 'uint16', ctor: Uint16Array, bytes: 2 },
  UINT32: { ort: 'uint32', ctor: Uint32Array, bytes: 4 },
  UINT64: { ort: 'uint64', ctor: BigUint64Array, bytes: 8 },
  FP16: { ort: 'float16', ctor: Uint16Array, bytes: 2 },
  FP32: { ort: 'float32', ctor: Float32Array, bytes: 4 },
  FP64: { ort: 'float64', ctor: Float64Array, bytes: 8 },
  BYTES: { ort: 'string', ctor: Array, bytes: 0 },
};
const DATATYPES = /** @type {Datatype[]} */ (Object.keys(TABLE));
/** @type {Map<string, Datatype>} */
const FROM_ORT = new Map(DATATYPES.map((d) => [TABLE[d].ort, d]));

/** @param {unknown} d @returns {d is Datatype} */
const isDatatype = (d) => typeof d === 'string' && Object.prototype.hasOwnProperty.call(TABLE, d);

/** @param {Datatype} datatype @returns {string} onnxruntime's type name */
function toOrt(datatype) {
  if (!isDatatype(datatype)) throw new Error(`unknown datatype '${datatype}'`);
  return TABLE[datatype].ort;
}

/** @param {string} ortType @returns {Datatype | null} null when the protocol has no such type (e.g. int4, bfloat16) */
function fromOrt(ortType) {
  return FROM_ORT.get(ortType) || null;
}

/** @param {Datatype} datatype @param {number} n @returns {TensorData} a zeroed array of n elements ('' for BYTES) */
function arrayFor(datatype, n) {
  if (datatype === 'BYTES') return new Array(n).fill('');
  return new TABLE[datatype].ctor(n);
}

/** @param {Datatype} datatype @returns {number} bytes per element in the binary form (0 for BYTES: variable) */
function bytesPerElement(datatype) {
  return TABLE[datatype].bytes;
}

/** @param {Datatype} datatype @param {unknown} data @returns {boolean} data is the array kind this datatype is held in */
function isArrayFor(datatype, data) {
  if (datatype === 'BYTES') return Array.isArray(data) && data.every((s) => typeof s === 'string' || Buffer.isBuffer(s));
  // by tag, not instanceof: arrays from another realm (a worker, a vm context) count too; a Buffer is a Uint8Array
  return ArrayBuffer.isView(data) && Object.prototype.toString.call(data) === `[object ${TABLE[datatype].ctor.name}]`;
}

/** @param {number[]} shape */
const elementCount = (shape) => shape.reduce((a, b) => a * b, 1);

const INT_RANGE = {
  INT8: [-128, 127], INT16: [-32768, 32767], INT32: [-2147483648, 2147483647],
  UINT8: [0, 255], UINT16: [0, 65535], UINT32: [0, 4294967295],
};

/**
 * Flat JSON values (numbers, booleans, strings; integers of 64 bits as numbers or decimal strings)
 * to the datatype's array. Throws an Error whose message names the bad element; the caller adds the field.
 * @param {Datatype} datatype @param {unknown[]} values @returns {TensorData}
 */
function fromJson(datatype, values) {
  const n = values.length;
  if (datatype === 'BYTES') {
    return values.map((v, i) => {
      if (typeof v !== 'string') throw new Error(`element ${i} is ${describe(v)}; BYTES takes strings`);
      return v;
    });
  }
  const out = /** @type {any} */ (arrayFor(datatype, n));
  for (let i = 0; i < n; i++) {
    const v = values[i];
    if (datatype === 'BOOL') {
      if (typeof v === 'boolean') out[i] = v ? 1 : 0;
      else if (v === 0 || v === 1) out[i] = v;
      else throw new Error(`element ${i} is ${describe(v)}; BOOL takes true/false`);
    } else if (datatype === 'INT64' || datatype === 'UINT64') {
      out[i] = toBigInt(v, i, datatype);
    } else if (typeof v !== 'number' || !Number.isFinite(v)) {
      throw new Error(`element ${i} is ${describe(v)}; ${datatype} takes finite numbers`);
    } else if (datatype === 'FP16') {
      out[i] = toHalf(v);
    } else if (datatype === 'FP32' || datatype === 'FP64') {
      out[i] = v;
    } else {
      const [lo, hi] = INT_RANGE[/** @type {keyof typeof INT_RANGE} */ (datatype)];
      if (!Number.isInteger(v) || v < lo || v > hi) throw new Error(`element ${i} is ${v}; ${datatype} takes integers in [${lo}, ${hi}]`);
      out[i] = v;
    }
  }
  return out;
}

/** @param {unknown} v @param {number} i @param {'INT64'|'UINT64'} dt */
function toBigInt(v, i, dt) {
  let b;
  if (typeof v === 'number' && Number.isSafeInteger(v)) b = BigInt(v);
  else if (typeof v === 'string' && /^-?\d{1,20}$/.test(v)) b = BigInt(v);
  else throw new Error(`element ${i} is ${describe(v)}; ${dt} takes integers (numbers, or decimal strings past 2^53)`);
  const [lo, hi] = dt === 'INT64' ? [-(2n ** 63n), 2n ** 63n - 1n] : [0n, 2n ** 64n - 1n];
  if (b < lo || b > hi) throw new Error(`element ${i} is ${v}; out of ${dt}'s range`);
  return b;
}

/**
 * The datatype's array as flat JSON values: numbers (64-bit integers past 2^53 as decimal strings,
 * FP16 as the number it stands for), booleans for BOOL, strings for BYTES (Buffers as UTF-8).
 * @param {Datatype} datatype @param {TensorData} data @returns {Array<number|boolean|string>}
 */
function toJson(datatype, data) {
  if (datatype === 'BYTES') return Array.from(/** @type {Array<string|Buffer>} */ (data), (s) => (typeof s === 'string' ? s : s.toString('utf8')));
  if (datatype === 'BOOL') return Array.from(/** @type {Uint8Array} */ (data), (v) => v !== 0);
  if (datatype === 'FP16') return Array.from(/** @type {Uint16Array} */ (data), shortestHalf);
  if (datatype === 'INT64' || datatype === 'UINT64') {
    return Array.from(/** @type {BigInt64Array} */ (data), (b) => {
      const n = Number(b);
      return Number.isSafeInteger(n) ? n : b.toString();
    });
  }
  if (datatype === 'FP32') return Array.from(/** @type {Float32Array} */ (data), shortestFloat32);
  return Array.from(/** @type {Float64Array} */ (data));
}

/**
 * The number with the fewest significant digits (1..9) that reads back as the same float32:
 * 0.97931165 rather than its double 0.9793116450309753 (JSON answers ~40% shorter). A try rounds
 * at p digits in double arithmetic (k / 10^n is the double nearest that decimal, which JSON prints
 * as it is); reading back is monotonic in p (the p+1-digit grid holds the p-digit one), so a binary
 * search over p takes ~3 tries.
 * @param {number} v a float32's value
 */
function shortestFloat32(v) {
  if ((Number.isInteger(v) && Math.abs(v) <= 2 ** 24) || !Number.isFinite(v)) return v; // every integer to 2^24 is a float32
  const e = Math.floor(Math.log10(Math.abs(v)));
  let lo = 1;
  let hi = 9;
  let best = NaN;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    const r = roundAt(v, mid - 1 - e);
    if (Math.fround(r) === v) {
      hi = mid;
      best = r;
    } else lo = mid + 1;
  }
  return hi === 9 ? Number(v.toPrecision(9)) : best;
}

/** As shortestFloat32 for IEEE half bits (1..5 digits read back as the same half). @param {number} h */
function shortestHalf(h) {
  const v = fromHalf(h);
  if ((Number.isInteger(v) && Math.abs(v) <= 2048) || !Number.isFinite(v)) return v; // every integer to 2048 is a half
  const e = Math.floor(Math.log10(Math.abs(v)));
  let lo = 1;
  let hi = 5;
  let best = NaN;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    const r = roundAt(v, mid - 1 - e);
    if (toHalf(r) === h) {
      hi = mid;
      best = r;
    } else lo = mid + 1;
  }
  return hi === 5 ? Number(v.toPrecision(5)) : best;
}

/** Powers of ten a double holds exactly. */
const POW10 = Array.from({ length: 23 }, (_, i) => 10 ** i);

/** v rounded at 10^-n (away from zero at a half); past the powers of ten a double holds exactly, by toPrecision @param {number} v @param {number} n */
function roundAt(v, n) {
  if (n > 22 || n < -22) return Number(v.toPrecision(Math.max(1, Math.min(100, n + 1 + Math.floor(Math.log10(Math.abs(v)))))));
  const a = Math.abs(v); // halves round away from zero, as toPrecision does
  const r = n >= 0 ? Math.round(a * POW10[n]) / POW10[n] : Math.round(a / POW10[-n]) * POW10[-n];
  return v < 0 ? -r : r;
}

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** @param {number} v @returns {number} IEEE half bits, round to nearest even */
function toHalf(v) {
  f32[0] = v;
  const x = u32[0];
  const sign = (x >>> 16) & 0x8000;
  const exp = (x >>> 23) & 0xff;
  let mant = x & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant ? 0x200 : 0);
  let e = exp - 127 + 15;
  if (e >= 0x1f) return sign | 0x7c00;
  if (e <= 0) {
    if (e < -10) return sign;
    mant |= 0x800000;
    const shift = 14 - e;
    let h = mant >>> shift;
    const rem = mant & ((1 << shift) - 1);
    const half = 1 << (shift - 1);
    if (rem > half || (rem === half && (h & 1))) h += 1;
    return sign | h;
  }
  let h = (e << 10) | (mant >>> 13);
  const rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem === 0x1000 && (h & 1))) h += 1;
  return sign | h;
}

/** @param {number} h half bits @returns {number} */
function fromHalf(h) {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >>> 10) & 0x1f;
  const mant = h & 0x3ff;
  if (exp === 0) return sign * mant * 2 ** -24;
  if (exp === 0x1f) return mant ? NaN : sign * Infinity;
  return sign * (1 + mant / 1024) * 2 ** (exp - 15);
}

/** @param {unknown} v */
function describe(v) {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'string') return `the string ${JSON.stringify(v.length > 20 ? `${v.slice(0, 20)}…` : v)}`;
  return typeof v === 'object' ? 'an object' : String(v);
}

module.exports = {
  DATATYPES, isDatatype, toOrt, fromOrt, arrayFor, bytesPerElement, isArrayFor, elementCount, fromJson, toJson, toHalf, fromHalf,
  shortestFloat32, shortestHalf,
};
