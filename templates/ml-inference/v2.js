// @ts-check
'use strict';
/**
 * The Open Inference Protocol (KServe v2 REST), pure: which endpoint a path names, an infer
 * request's body (JSON, or JSON plus the binary tensor extension: `Inference-Header-Content-Length`
 * and per-input `binary_data_size`) into named Tensors, and the answer (JSON, or JSON plus binary
 * outputs where `binary_data` / `binary_data_output` ask for them) back into bytes. Every error is a
 * 400 whose message names the field (`inputs[1] ('attention_mask').shape: ...`).
 * Binary layouts are Triton's: fixed-size elements little-endian, row-major; BYTES elements each a
 * 4-byte little-endian length then the bytes.
 */
const dtypes = require('./dtypes');
const { badInput, RuntimeError } = require('./errors');
const { splitBody, fromBinary, toBinary, HEADER_LENGTH } = require('./v2-binary');

/** @typedef {import('./dtypes').Tensor} Tensor */
/**
 * @typedef {{ kind: 'server' | 'live' | 'ready' } | { kind: 'model' | 'modelReady' | 'infer', name: string, version: string | null }
 *   | { kind: 'unknown' }} V2Route
 * @typedef {{ name: string, binary: boolean | null }} RequestedOutput binary null: the request's binary_data_output decides
 * @typedef {object} InferRequest
 * @property {string | undefined} id
 * @property {Record<string, string | number | boolean>} parameters
 * @property {Record<string, Tensor>} inputs
 * @property {RequestedOutput[] | null} outputs null: every output
 * @property {boolean} binaryOutput the request's `parameters.binary_data_output`
 */

const MAX_RANK = 64;

/**
 * @param {string} path the URL path, no query
 * @returns {V2Route | null} null when the path is not under /v2
 */
function matchV2(path) {
  if (path !== '/v2' && !path.startsWith('/v2/')) return null;
  const tail = path.slice(3).replace(/\/$/, ''); // one trailing slash is forgiven
  if (tail === '') return { kind: 'server' };
  const parts = tail.slice(1).split('/');
  if (parts[0] === 'health' && parts.length === 2 && (parts[1] === 'live' || parts[1] === 'ready')) return { kind: parts[1] };
  if (parts[0] !== 'models' || parts.length < 2 || parts[1] === '') return { kind: 'unknown' };
  let name;
  try {
    name = decodeURIComponent(parts[1]);
  } catch {
    return { kind: 'unknown' };
  }
  let rest = parts.slice(2);
  /** @type {string | null} */
  let version = null;
  if (rest[0] === 'versions') {
    if (rest.length < 2 || rest[1] === '') return { kind: 'unknown' };
    try {
      version = decodeURIComponent(rest[1]);
    } catch {
      return { kind: 'unknown' };
    }
    rest = rest.slice(2);
  }
  if (rest.length === 0) return { kind: 'model', name, version };
  if (rest.length === 1 && rest[0] === 'ready') return { kind: 'modelReady', name, version };
  if (rest.length === 1 && rest[0] === 'infer') return { kind: 'infer', name, version };
  return { kind: 'unknown' };
}

/** @param {unknown} v @returns {v is Record<string, unknown>} */
const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * @param {unknown} p a `parameters` value
 * @param {string} field for messages
 * @returns {Record<string, string | number | boolean>}
 */
function parameters(p, field) {
  if (p === undefined || p === null) return {};
  if (!isObject(p)) throw badInput(`${field}: want an object of parameters`);
  for (const [k, v] of Object.entries(p)) {
    if (k.startsWith('shared_memory')) throw badInput(`${field}.${k}: shared memory is not supported here; send the data in the body`);
    if (k === 'classification') throw badInput(`${field}.classification: the classification extension is not supported`);
    if (!['string', 'number', 'boolean'].includes(typeof v)) throw badInput(`${field}.${k}: a parameter is a string, number or boolean`);
  }
  return /** @type {Record<string, string | number | boolean>} */ (p);
}

/**
 * Parse and check an infer request body. Checks the protocol only; names, datatypes and shapes
 * against the model are the batcher's (batcher.infer).
 * @param {Buffer} body decompressed body
 * @param {import('node:http').IncomingHttpHeaders} headers
 * @returns {InferRequest}
 */
function parseInferRequest(body, headers) {
  const { json, binary } = splitBody(body, headers);
  /** @type {unknown} */
  let doc;
  try {
    doc = JSON.parse(json.toString('utf8'));
  } catch (err) {
    throw badInput(`the body is not valid JSON: ${err instanceof Error ? err.message : err}`);
  }
  if (!isObject(doc)) throw badInput('the body must be a JSON object {"inputs": [...]}');
  if (doc.id !== undefined && typeof doc.id !== 'string') throw badInput('id: want a string');
  const params = parameters(doc.parameters, 'parameters');
  const binaryOutput = params.binary_data_output === undefined ? false : params.binary_data_output;
  if (typeof binaryOutput !== 'boolean') throw badInput('parameters.binary_data_output: want true or false');
  if (!Array.isArray(doc.inputs) || doc.inputs.length === 0) throw badInput('inputs: want a non-empty array of tensors');
  /** @type {Record<string, Tensor>} */
  const inputs = {};
  let offset = 0;
  doc.inputs.forEach((/** @type {unknown} */ t, /** @type {number} */ i) => {
    if (!isObject(t)) throw badInput(`inputs[${i}]: want an object {name, shape, datatype, data}`);
    if (typeof t.name !== 'string' || t.name === '') throw badInput(`inputs[${i}].name: want a non-empty string`);
    const where = `inputs[${i}] ('${t.name}')`;
    if (Object.prototype.hasOwnProperty.call(inputs, t.name)) throw badInput(`${where}.name: input '${t.name}' is given twice`);
    const shape = t.shape;
    if (!Array.isArray(shape) || shape.length > MAX_RANK || !shape.every((d) => Number.isSafeInteger(d) && d >= 0)) {
      throw badInput(`${where}.shape: want an array of at most ${MAX_RANK} non-negative integers`);
    }
    if (!dtypes.isDatatype(t.datatype)) {
      const also = t.datatype === 'BF16' ? ' (BF16 is not supported here)' : '';
      throw badInput(`${where}.datatype: ${JSON.stringify(t.datatype)} is not one of ${dtypes.DATATYPES.join(', ')}${also}`);
    }
    const datatype = /** @type {import('./dtypes').Datatype} */ (t.datatype);
    const p = parameters(t.parameters, `${where}.parameters`);
    const n = dtypes.elementCount(shape);
    /** @type {import('./dtypes').TensorData} */
    let data;
    if (p.binary_data_size !== undefined) {
      const size = p.binary_data_size;
      if (!Number.isSafeInteger(size) || /** @type {number} */ (size) < 0) throw badInput(`${where}.parameters.binary_data_size: want a byte count`);
      if (t.data !== undefined) throw badInput(`${where}.data: give data or parameters.binary_data_size, not both`);
      const end = offset + /** @type {number} */ (size);
      if (end > binary.length) {
        throw badInput(`${where}.parameters.binary_data_size: ${size} bytes from offset ${offset} run past the ${binary.length} binary bytes after the JSON`);
      }
      data = fromBinary(datatype, binary.subarray(offset, end), n, where);
      offset = end;
    } else {
      if (t.data === undefined) throw badInput(`${where}.data: missing (or give parameters.binary_data_size and the bytes after the JSON)`);
      const flat = flatten(t.data, shape, n, where);
      try {
        data = dtypes.fromJson(datatype, flat);
      } catch (err) {
        throw badInput(`${where}.data: ${err instanceof Error ? err.message : err}`);
      }
    }
    inputs[t.name] = { datatype, shape: [...shape], data };
  });
  if (offset !== binary.length) {
    throw badInput(`Inference-Header-Content-Length: ${binary.length - offset} bytes after the JSON are claimed by no input's parameters.binary_data_size`);
  }
  return { id: doc.id, parameters: params, inputs, outputs: requestedOutputs(doc.outputs), binaryOutput };
}

/** @param {unknown} list @returns {RequestedOutput[] | null} */
function requestedOutputs(list) {
  if (list === undefined || list === null) return null;
  if (!Array.isArray(list)) throw badInput('outputs: want an array of {name, parameters}');
  if (list.length === 0) return null;
  /** @type {RequestedOutput[]} */
  const out = [];
  list.forEach((o, i) => {
    if (!isObject(o) || typeof o.name !== 'string' || o.name === '') throw badInput(`outputs[${i}].name: want a non-empty string`);
    if (out.some((x) => x.name === o.name)) throw badInput(`outputs[${i}].name: output '${o.name}' is asked for twice`);
    const p = parameters(o.parameters, `outputs[${i}] ('${o.name}').parameters`);
    if (p.binary_data !== undefined && typeof p.binary_data !== 'boolean') {
      throw badInput(`outputs[${i}] ('${o.name}').parameters.binary_data: want true or false`);
    }
    out.push({ name: o.name, binary: p.binary_data === undefined ? null : /** @type {boolean} */ (p.binary_data) });
  });
  return out;
}

/**
 * JSON tensor data, flat or nested as the shape says, to a flat array of n values.
 * @param {unknown} data @param {number[]} shape @param {number} n @param {string} where
 * @returns {unknown[]}
 */
function flatten(data, shape, n, where) {
  const want = `shape [${shape.join(', ')}] holds ${n} elements`;
  if (!Array.isArray(data)) throw badInput(`${where}.data: want an array (flat, or nested as the shape); ${want}`);
  if (!data.some(Array.isArray)) {
    if (data.length !== n) throw badInput(`${where}.data: ${data.length} elements, but ${want}`);
    return data;
  }
  /** @type {unknown[]} */
  const flat = [];
  /** @param {unknown} a @param {number} depth @param {string} at */
  const walk = (a, depth, at) => {
    if (depth === shape.length) {
      if (Array.isArray(a)) throw badInput(`${where}.data${at}: nested deeper than the shape's rank ${shape.length}`);
      flat.push(a);
      return;
    }
    if (!Array.isArray(a) || a.length !== shape[depth]) {
      throw badInput(`${where}.data${at}: want an array of ${shape[depth]} (dim ${depth} of shape [${shape.join(', ')}]), or flat data of ${n} elements`);
    }
    a.forEach((v, k) => walk(v, depth + 1, `${at}[${k}]`));
  };
  walk(data, 0, '');
  return flat;
}

/**
 * The infer answer. Outputs in the order given; an output goes binary when its requested
 * `binary_data` says so, else when the request's `binary_data_output` does.
 * @param {{ modelName: string, modelVersion: string, id?: string, outputs: Record<string, Tensor>,
 *   requested: RequestedOutput[] | null, binaryOutput: boolean }} a
 * @returns {{ body: Buffer, headers: Record<string, string> }}
 */
function encodeInferResponse(a) {
  /** @type {Buffer[]} */
  const chunks = [];
  const outputs = Object.entries(a.outputs).map(([name, t]) => {
    const asked = a.requested ? a.requested.find((r) => r.name === name) : undefined;
    const binary = asked && asked.binary !== null ? asked.binary : a.binaryOutput;
    const head = { name, datatype: t.datatype, shape: t.shape };
    if (!binary) return { ...head, data: dtypes.toJson(t.datatype, t.data) };
    const bytes = toBinary(t.datatype, t.data);
    chunks.push(bytes);
    return { ...head, parameters: { binary_data_size: bytes.length } };
  });
  /** @type {Record<string, unknown>} */
  const doc = { model_name: a.modelName, model_version: a.modelVersion };
  if (a.id !== undefined) doc.id = a.id;
  doc.outputs = outputs;
  const json = Buffer.from(JSON.stringify(doc), 'utf8');
  if (chunks.length === 0) return { body: json, headers: { 'Content-Type': 'application/json' } };
  return {
    body: Buffer.concat([json, ...chunks]),
    headers: { 'Content-Type': 'application/octet-stream', 'Inference-Header-Content-Length': String(json.length) },
  };
}

/**
 * @param {import('./model-info').ModelInfo} info @param {string} name @param {string} version
 * @returns {{ name: string, versions: string[], platform: string, inputs: object[], outputs: object[] }}
 */
function modelMetadata(info, name, version) {
  const tensor = (/** @type {{ name: string, datatype: string, shape: number[] }} */ t) => ({ name: t.name, datatype: t.datatype, shape: t.shape });
  return { name, versions: [version], platform: info.platform, inputs: info.inputs.map(tensor), outputs: info.outputs.map(tensor) };
}

/** @param {unknown} err @returns {{ status: number, body: { error: string } }} the protocol's error form */
function errorBody(err) {
  if (err instanceof RuntimeError) return { status: err.status, body: { error: err.message } };
  return { status: 500, body: { error: err instanceof Error ? err.message : String(err) } };
}

module.exports = { matchV2, parseInferRequest, encodeInferResponse, modelMetadata, errorBody, splitBody, HEADER_LENGTH };
