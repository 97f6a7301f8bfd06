// @ts-check
'use strict';
/**
 * v1 instances (`{"instances": [...]}`) for models beyond one fixed-shape float32 input: an instance
 * is an object `{inputName: nested array, ...}` (a bare nested array when the model has one input),
 * each value shaped like the input without its batch axis (where the model has one). Pure.
 */
const { badInput } = require('./errors');
const dtypes = require('./dtypes');
const { sliceRows } = require('./tensors');

/** @typedef {import('./dtypes').Tensor} Tensor */
/** @typedef {Record<string, { dims: number[], rows: any[] }>} BatchOutputs  v1: per output, one row per instance */

const MAX_RANK = 32;

/**
 * A rectangular nested array (or a scalar) as its shape and its flat row-major values.
 * @param {unknown} value
 * @returns {{ shape: number[], values: unknown[] }}
 * @throws {Error} when ragged or deeper than 32
 */
function flattenNested(value) {
  /** @type {number[]} */
  const shape = [];
  for (let v = value; Array.isArray(v); v = v[0]) {
    shape.push(v.length);
    if (shape.length > MAX_RANK) throw new Error(`nested deeper than ${MAX_RANK}`);
    if (v.length === 0) break;
  }
  /** @type {unknown[]} */
  const values = [];
  /** @param {unknown} a @param {number} depth @param {string} at */
  const walk = (a, depth, at) => {
    if (depth === shape.length) {
      if (Array.isArray(a)) throw new Error(`ragged nested array: ${at || 'the value'} is an array where the first row has a scalar`);
      values.push(a);
      return;
    }
    if (!Array.isArray(a) || a.length !== shape[depth]) {
      throw new Error(`ragged nested array: ${at || 'the value'} is not an array of ${shape[depth]} (the shape of its first row)`);
    }
    for (let i = 0; i < a.length; i++) walk(a[i], depth + 1, `${at}[${i}]`);
  };
  walk(value, 0, '');
  return { shape, values };
}

/**
 * @param {import('./model-info').ModelInfo} info
 * @param {unknown} instance
 * @param {number} index position in the request
 * @returns {Record<string, Tensor>} each input with a batch axis of 1 where the model batches (or fixes it at 1)
 */
function toInstanceTensors(info, instance, index) {
  const names = info.inputs.map((s) => s.name);
  /** @type {Record<string, unknown>} */
  let obj;
  if (instance && typeof instance === 'object' && !Array.isArray(instance) && !ArrayBuffer.isView(instance)) {
    obj = /** @type {Record<string, unknown>} */ (instance);
  } else if (info.inputs.length === 1) {
    obj = { [names[0]]: instance };
  } else {
    throw badInput(`instance ${index} must be an object {${names.map((n) => `"${n}": [...]`).join(', ')}}: the model has ${names.length} inputs`);
  }
  for (const k of Object.keys(obj)) {
    if (!names.includes(k)) throw badInput(`instance ${index} names input '${k}', which the model does not have (inputs: ${names.join(', ')})`);
  }
  const perInstance = info.batchable || info.fixedBatch === 1;
  /** @type {Record<string, Tensor>} */
  const out = {};
  for (const spec of info.inputs) {
    const where = `instance ${index}, input '${spec.name}'`;
    if (!(spec.name in obj)) throw badInput(`${where} is missing`);
    const want = perInstance ? spec.shape.slice(1) : spec.shape;
    let nested;
    try {
      nested = flattenNested(obj[spec.name]);
    } catch (err) {
      throw badInput(`${where}: ${err instanceof Error ? err.message : err}`);
    }
    let shape = nested.shape;
    const wantText = `[${want.map((d) => (d < 0 ? '?' : d)).join(', ')}]`;
    if (shape.length === 1 && want.length > 1 && want.every((d) => d > 0) && shape[0] === dtypes.elementCount(want)) shape = want;
    if (shape.length !== want.length || shape.some((d, i) => want[i] >= 0 && d !== want[i])) {
      throw badInput(`${where} has shape [${nested.shape.join(', ')}]; the model takes ${wantText} per instance`);
    }
    let data;
    try {
      data = dtypes.fromJson(spec.datatype, nested.values);
    } catch (err) {
      throw badInput(`${where}: ${err instanceof Error ? err.message : err}`);
    }
    out[spec.name] = { datatype: spec.datatype, shape: perInstance ? [1, ...shape] : shape, data };
  }
  return out;
}

/**
 * v1 answers: per output, one row per instance (the rows of axis 0 where the model has a batch
 * axis, else each run's whole output).
 * @param {Array<Record<string, Tensor>>} results the runs' outputs, in the instances' order
 * @param {boolean} perInstance
 * @returns {BatchOutputs}
 */
function v1Rows(results, perInstance) {
  /** @type {BatchOutputs} */
  const outputs = {};
  for (const name of Object.keys(results[0])) {
    const all = results.map((r) => r[name]);
    /** @type {any[]} */
    const rows = [];
    for (const t of all) {
      if (!perInstance || t.shape[0] === 1) rows.push(t.data);
      else for (let i = 0; i < t.shape[0]; i++) rows.push(sliceRows(t, i, i + 1).data);
    }
    outputs[name] = { dims: perInstance ? all[0].shape.slice(1) : all[0].shape, rows };
  }
  return outputs;
}

module.exports = { flattenNested, toInstanceTensors, v1Rows };
