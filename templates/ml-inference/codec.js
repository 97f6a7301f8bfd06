// @ts-check
'use strict';
/**
 * Request decoding and response encoding: the defaults, and the handler folder's own
 * `handler.js` (any of `preprocess` / `postprocess` it exports replaces the default).
 */
const fs = require('node:fs');
const path = require('node:path');
const { badInput } = require('./errors');
const dtypes = require('./dtypes');

/**
 * @typedef {Record<string, any[]>} Outputs per output name, one row per instance (a typed array of the output's datatype, or string[])
 * @typedef {object} CodecContext
 * @property {string[] | null} labels          contents of function/labels.json, if any
 * @property {Record<string, number[]>} outputDims per output name, dims of one instance's row
 * @property {import('./model-info').ModelInfo} model
 * @property {{ preprocess: Preprocess, postprocess: Postprocess }} defaults
 * @typedef {(body: Buffer, headers: import('node:http').IncomingHttpHeaders, ctx: CodecContext) => unknown[] | Promise<unknown[]>} Preprocess
 * @typedef {(outputs: Outputs, instances: unknown[], ctx: CodecContext) => unknown[] | Promise<unknown[]>} Postprocess
 */

/**
 * JSON `{"instances": [...]}`, `{"data": [...]}` (one instance), or a bare array of instances
 * (a bare flat array of numbers is one instance).
 * @type {Preprocess}
 */
function defaultPreprocess(body) {
  const doc = parseJson(body);
  if (Array.isArray(doc)) {
    if (doc.length > 0 && typeof doc[0] === 'number') return [doc];
    return nonEmpty(doc, 'the body array');
  }
  if (doc && typeof doc === 'object') {
    const o = /** @type {Record<string, unknown>} */ (doc);
    if (Array.isArray(o.instances)) return nonEmpty(o.instances, '"instances"');
    if (Array.isArray(o.data)) return [o.data];
  }
  throw badInput('want a JSON body {"instances": [[...], ...]}, {"data": [...]} or a bare array of instances');
}

/**
 * One output: with labels.json whose length matches the row, `{label, index, score}` by argmax;
 * otherwise the row as an array (flat; JSON values per the output's datatype: 64-bit integers
 * past 2^53 as strings, FP16 as numbers, BOOL as true/false, BYTES as strings). Several outputs:
 * `{outputName: row, ...}`.
 * @type {Postprocess}
 */
function defaultPostprocess(outputs, instances, ctx) {
  const names = Object.keys(outputs);
  /** @type {Record<string, import('./dtypes').Datatype>} */
  const types = {};
  for (const o of (ctx.model && ctx.model.outputs) || []) types[o.name] = o.datatype;
  /** @param {string} n @param {any} row */
  const json = (n, row) => dtypes.toJson(types[n] || 'FP32', row);
  return instances.map((_, i) => {
    if (names.length === 1) {
      const row = outputs[names[0]][i];
      const values = json(names[0], row);
      if (ctx.labels && ctx.labels.length === values.length && values.every((v) => typeof v === 'number')) {
        const index = argmax(/** @type {number[]} */ (values));
        return { label: ctx.labels[index], index, score: values[index] };
      }
      return values;
    }
    /** @type {Record<string, unknown[]>} */
    const o = {};
    for (const n of names) o[n] = json(n, outputs[n][i]);
    return o;
  });
}

/** @param {Buffer} body @returns {unknown} */
function parseJson(body) {
  try {
    return JSON.parse(body.toString('utf8'));
  } catch (err) {
    throw badInput(`request body is not valid JSON: ${err instanceof Error ? err.message : err}`);
  }
}

/** @param {unknown[]} a @param {string} what */
function nonEmpty(a, what) {
  if (a.length === 0) throw badInput(`${what} is empty; want at least one instance`);
  return a;
}

/** @param {ArrayLike<number>} row */
function argmax(row) {
  let best = 0;
  for (let i = 1; i < row.length; i++) if (row[i] > row[best]) best = i;
  return best;
}

/**
 * Load function/handler.js and function/labels.json if present.
 * @param {string} functionDir
 * @returns {{ preprocess: Preprocess, postprocess: Postprocess, labels: string[] | null, handlerFile: string | null }}
 */
function loadCodec(functionDir) {
  const handlerFile = path.join(functionDir, 'handler.js');
  /** @type {any} */
  const handler = fs.existsSync(handlerFile) ? require(handlerFile) : {};
  for (const k of ['preprocess', 'postprocess']) {
    if (handler[k] !== undefined && typeof handler[k] !== 'function') throw new Error(`${handlerFile}: ${k} is not a function`);
  }
  const labelsFile = path.join(functionDir, 'labels.json');
  /** @type {string[] | null} */
  let labels = null;
  if (fs.existsSync(labelsFile)) {
    const parsed = JSON.parse(fs.readFileSync(labelsFile, 'utf8'));
    if (!Array.isArray(parsed)) throw new Error(`${labelsFile}: want a JSON array of class names`);
    labels = parsed.map(String);
  }
  return {
    preprocess: handler.preprocess || defaultPreprocess,
    postprocess: handler.postprocess || defaultPostprocess,
    labels,
    handlerFile: fs.existsSync(handlerFile) ? handlerFile : null,
  };
}

module.exports = { loadCodec, defaultPreprocess, defaultPostprocess, parseJson, argmax };
