// @ts-check
'use strict';
/**
 * What a loaded ONNX model takes and gives (contract.md, issue 25): named inputs and outputs with
 * their datatypes and shapes (-1 for a dynamic dim), whether requests may be concatenated along
 * axis 0 (`batchable`), and axis 0's fixed size otherwise (`fixedBatch`). Pure: reads the
 * session's metadata only.
 */
const dtypes = require('./dtypes');

/**
 * @typedef {object} TensorSpec
 * @property {string} name
 * @property {import('./dtypes').Datatype} datatype
 * @property {number[]} shape            -1 for every dynamic dim
 * @property {Array<string|null>} symbols the dim's symbolic name where it has one (dims sharing a name must agree), else null
 *
 * @typedef {object} ModelInfo
 * @property {TensorSpec[]} inputs
 * @property {TensorSpec[]} outputs
 * @property {boolean} batchable  axis 0 of every input and output is dynamic (one shared symbol if named)
 * @property {number} fixedBatch  axis 0's fixed size when not batchable, every input fixes it alike and every output has it; else 0
 * @property {'onnxruntime_onnx'} platform
 * @property {boolean} legacy     one float32 input whose non-batch dims are fixed, batched or fixed at 1: v1 instances are Float32Arrays
 * @property {string} inputName   the first input (v1 description, `GET /`)
 * @property {number[]} instanceDims  the first input's dims without axis 0 (where batchable or fixed at 1), -1 if dynamic
 * @property {number} instanceSize    their product (legacy models), else 0
 * @property {boolean} dynamicBatch   = batchable (the name before issue 25)
 * @property {string[]} outputNames
 */

/**
 * @param {{ inputNames: readonly string[], outputNames: readonly string[], inputMetadata: readonly any[], outputMetadata?: readonly any[] }} session
 * @param {string} modelPath for error messages
 * @returns {ModelInfo}
 */
function describeModel(session, modelPath) {
  const inputs = session.inputNames.map((n, i) => spec(session.inputMetadata[i], n, modelPath, 'input'));
  const outMeta = session.outputMetadata || [];
  const outputs = session.outputNames.map((n, i) => spec(outMeta[i], n, modelPath, 'output'));
  if (inputs.length === 0) throw new Error(`${modelPath}: the model has no inputs`);
  const all = [...inputs, ...outputs];
  const axis0 = all.map((t) => (t.shape.length > 0 ? t.shape[0] : null));
  const named = new Set(all.map((t) => t.symbols[0]).filter((s) => s));
  const batchable = axis0.every((d) => d === -1) && named.size <= 1;
  // a fixed batch: every input fixes axis 0 alike, each output has it (fixed alike or dynamic), and
  // every tensor has a dim past it (a plain vector [3] has no batch axis: its requests are not split)
  const fixed = inputs.map((t) => (t.shape.length > 1 ? t.shape[0] : 0));
  const outputsAlike = outputs.every((t) => t.shape.length > 1 && (t.shape[0] === fixed[0] || t.shape[0] === -1));
  const fixedBatch = !batchable && outputsAlike && fixed.every((d) => d > 0 && d === fixed[0]) ? fixed[0] : 0;
  const first = inputs[0];
  const perInstance = batchable || fixedBatch === 1;
  const instanceDims = perInstance ? first.shape.slice(1) : [...first.shape];
  const legacy = inputs.length === 1 && first.datatype === 'FP32' && perInstance && first.shape.length > 0 && instanceDims.every((d) => d > 0);
  return {
    inputs,
    outputs,
    batchable,
    fixedBatch,
    platform: 'onnxruntime_onnx',
    legacy,
    inputName: first.name,
    instanceDims,
    instanceSize: legacy ? instanceDims.reduce((a, b) => a * b, 1) : 0,
    dynamicBatch: batchable,
    outputNames: outputs.map((t) => t.name),
  };
}

/**
 * @param {any} meta onnxruntime's ValueMetadata (shape: numbers, symbol names, '' when unknown)
 * @param {string} name @param {string} modelPath @param {'input'|'output'} kind
 * @returns {TensorSpec}
 */
function spec(meta, name, modelPath, kind) {
  if (!meta) return { name, datatype: 'FP32', shape: [], symbols: [] };
  if (!meta.isTensor) throw new Error(`${modelPath}: ${kind} '${name}' is not a tensor (sequences and maps are not served)`);
  const datatype = dtypes.fromOrt(meta.type);
  if (!datatype) throw new Error(`${modelPath}: ${kind} '${name}' is ${meta.type}, which the runtime does not serve`);
  /** @type {Array<number|string>} */
  const dims = meta.shape || [];
  return {
    name,
    datatype,
    shape: dims.map((d) => (typeof d === 'number' && d > 0 ? d : typeof d === 'number' && d === 0 ? 0 : -1)),
    symbols: dims.map((d) => (typeof d === 'string' && d !== '' ? d : null)),
  };
}

module.exports = { describeModel };
