// @ts-check
'use strict';
/**
 * Pure tensor work for the batcher: validating a request's tensors against the model's inputs
 * (every error names the input), the key under which requests may share a run, and
 * concatenating / slicing along axis 0.
 */
const { badInput, modelError } = require('./errors');
const dtypes = require('./dtypes');

/** @typedef {import('./dtypes').Tensor} Tensor */
/** @typedef {import('./model-info').ModelInfo} ModelInfo */

/**
 * Typed arrays the runtime allocated itself (concatenated batches, data converted from JSON, v1
 * instances stacked): nobody else holds them, so a run may transfer their buffers to the worker
 * thread instead of copying (a batch of 8 mobilenet images is 4.8 MB: ~7 ms to clone here).
 * @type {WeakSet<object>}
 */
const owned = new WeakSet();

/**
 * Arrays under this size are cloned rather than tracked: a clone of a few KiB costs less than a
 * WeakSet entry, which the garbage collector must visit (issue 25: ~2x CPU per small request).
 */
const OWN_MIN_BYTES = 32 * 1024;

/** @template {object} A @param {A} array @returns {A} */
function own(array) {
  if (/** @type {any} */ (array).byteLength >= OWN_MIN_BYTES) owned.add(array);
  return array;
}

/**
 * The buffers of the runtime's own typed arrays among these tensors that span their whole buffer
 * (a view into a larger one, e.g. a slice, is copied). Transferred buffers are unusable afterwards.
 * @param {Tensor[]} tensors @returns {ArrayBuffer[]}
 */
function transferList(tensors) {
  /** @type {ArrayBuffer[]} */
  const list = [];
  for (const t of tensors) {
    const d = /** @type {any} */ (t.data);
    const whole = ArrayBuffer.isView(d) && d.byteOffset === 0 && d.byteLength === d.buffer.byteLength;
    if (whole && owned.has(d) && !list.includes(/** @type {ArrayBuffer} */ (d.buffer))) list.push(/** @type {ArrayBuffer} */ (d.buffer));
  }
  return list;
}

/**
 * Check a request's tensors against the model and normalise their data (plain JSON arrays become
 * the datatype's typed array). Axis 0 of a model that fixes it may be any multiple of its size.
 * @param {ModelInfo} info
 * @param {unknown} inputs
 * @returns {Record<string, Tensor>}
 */
function validateInputs(info, inputs) {
  if (!inputs || typeof inputs !== 'object' || Array.isArray(inputs)) throw badInput('inputs: want an object {inputName: tensor}');
  const names = info.inputs.map((s) => s.name);
  for (const k of Object.keys(inputs)) {
    if (!names.includes(k)) throw badInput(`input '${k}': the model has no such input (inputs: ${names.join(', ')})`);
  }
  /** @type {Map<string, { value: number, input: string }>} */
  const symbols = new Map();
  /** @type {Record<string, Tensor>} */
  const out = {};
  for (const spec of info.inputs) {
    const t = /** @type {Record<string, any>} */ (inputs)[spec.name];
    const where = `input '${spec.name}'`;
    if (!t || typeof t !== 'object') throw badInput(`${where} is missing`);
    if (t.datatype !== spec.datatype) throw badInput(`${where}: datatype ${JSON.stringify(t.datatype)}; the model takes ${spec.datatype}`);
    const shape = t.shape;
    const shown = () => `[${spec.shape.map((d) => (d < 0 ? -1 : d)).join(', ')}]`;
    if (!Array.isArray(shape) || !shape.every((d) => Number.isSafeInteger(d) && d >= 0)) {
      throw badInput(`${where}: shape must be an array of non-negative integers`);
    }
    if (shape.length !== spec.shape.length) throw badInput(`${where}: shape [${shape.join(', ')}] has rank ${shape.length}; the model takes ${shown()}`);
    for (let i = 0; i < shape.length; i++) {
      const want = spec.shape[i];
      const d = shape[i];
      const multiple = i === 0 && info.fixedBatch > 0 && d > 0 && d % info.fixedBatch === 0;
      if (want >= 0 && d !== want && !multiple) throw badInput(`${where}: shape [${shape.join(', ')}]; the model takes ${shown()} (dim ${i} is ${want})`);
      const sym = spec.symbols[i] || (i === 0 && info.batchable ? '\0batch' : null);
      if (!sym) continue;
      const seen = symbols.get(sym);
      if (seen && seen.value !== d) {
        const label = sym === '\0batch' ? 'axis 0 (the batch)' : `dim ${i} ('${sym}')`;
        throw badInput(`${where}: ${label} is ${d}, but input '${seen.input}' has ${seen.value} there`);
      }
      if (!seen) symbols.set(sym, { value: d, input: spec.name });
    }
    const n = dtypes.elementCount(shape);
    let data = t.data;
    if (!dtypes.isArrayFor(spec.datatype, data)) {
      if (!Array.isArray(data)) throw badInput(`${where}: data must be an array of ${n} ${spec.datatype} values`);
      if (data.length !== n) throw badInput(`${where}: ${data.length} values for shape [${shape.join(', ')}] (want ${n})`);
      try {
        data = own(dtypes.fromJson(spec.datatype, data));
      } catch (err) {
        throw badInput(`${where}: ${err instanceof Error ? err.message : err}`);
      }
    }
    if (data.length !== n) throw badInput(`${where}: ${data.length} values for shape [${shape.join(', ')}] (want ${n})`);
    out[spec.name] = { datatype: spec.datatype, shape: [...shape], data };
  }
  return out;
}

/**
 * Requests with equal keys may be concatenated along axis 0: every input's dims past axis 0.
 * @param {Record<string, Tensor>} inputs
 */
function batchKey(inputs) {
  const names = Object.keys(inputs);
  if (names.length === 1) return `${names[0]}:${inputs[names[0]].shape.slice(1).join('x')}`;
  return names.sort().map((k) => `${k}:${inputs[k].shape.slice(1).join('x')}`).join('|');
}

/** @param {Tensor} t @returns {number} elements per row of axis 0 */
const rowSize = (t) => dtypes.elementCount(t.shape.slice(1));

/**
 * @param {Tensor} t @param {number} from @param {number} to rows [from, to) of axis 0
 * @returns {Tensor} a view where the data allows (typed arrays), else a copy
 */
function sliceRows(t, from, to) {
  const r = rowSize(t);
  const data = ArrayBuffer.isView(t.data) ? t.data.subarray(from * r, to * r) : t.data.slice(from * r, to * r);
  return { datatype: t.datatype, shape: [to - from, ...t.shape.slice(1)], data: /** @type {any} */ (data) };
}

/**
 * @param {Tensor[]} parts same datatype and dims past axis 0
 * @returns {Tensor}
 */
function concatRows(parts) {
  if (parts.length === 1) return parts[0];
  const first = parts[0];
  const rows = parts.reduce((a, p) => a + p.shape[0], 0);
  const shape = [rows, ...first.shape.slice(1)];
  if (first.datatype === 'BYTES') {
    return { datatype: 'BYTES', shape, data: /** @type {any} */ (parts.flatMap((p) => /** @type {any[]} */ (p.data))) };
  }
  const data = own(/** @type {any} */ (dtypes.arrayFor(first.datatype, dtypes.elementCount(shape))));
  let offset = 0;
  for (const p of parts) {
    data.set(p.data, offset);
    offset += p.data.length;
  }
  return { datatype: first.datatype, shape, data };
}

/** @param {Record<string, Tensor>[]} list @returns {Record<string, Tensor>} */
function concatAll(list) {
  if (list.length === 1) return list[0];
  /** @type {Record<string, Tensor>} */
  const out = {};
  for (const k of Object.keys(list[0])) out[k] = concatRows(list.map((r) => r[k]));
  return out;
}

/** @param {Record<string, Tensor>} rec @param {number} from @param {number} to @returns {Record<string, Tensor>} */
function sliceAll(rec, from, to) {
  /** @type {Record<string, Tensor>} */
  const out = {};
  for (const [k, t] of Object.entries(rec)) out[k] = sliceRows(t, from, to);
  return out;
}

/** A batch's outputs must keep its rows on axis 0. @param {Record<string, Tensor>} outputs @param {number} rows */
function checkBatchAxis(outputs, rows) {
  for (const [name, t] of Object.entries(outputs)) {
    if (t.shape[0] !== rows) throw modelError(`output '${name}' has axis 0 of ${t.shape[0]} for a batch of ${rows} rows; the model is not batchable`);
  }
}

module.exports = { checkBatchAxis, validateInputs, batchKey, sliceRows, concatRows, concatAll, sliceAll, own, transferList, OWN_MIN_BYTES };
