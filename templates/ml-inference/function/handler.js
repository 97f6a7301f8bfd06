// @ts-check
'use strict';
/**
 * Default handler of a new ml-inference function. Both hooks are optional: delete this file, or
 * either export, to get the runtime's defaults (shown here as the pass-through).
 *
 * preprocess(body, headers, ctx) -> instances: one entry per instance, each a flat array of
 *   numbers (or Float32Array) whose length is the model input's size without the batch
 *   dimension, or a nested array of exactly that shape; for a model with several inputs (or
 *   non-float32 or dynamic ones) an object {inputName: nested array}. Throwing answers 400 bad_input.
 * postprocess(outputs, instances, ctx) -> one JSON-able result per instance; the runtime answers
 *   {"predictions": [...]}. outputs maps each ONNX output name to one row per instance: a typed
 *   array of the output's datatype (Float32Array for float32; BigInt64Array for int64 ...).
 * ctx: { labels (labels.json or null), outputDims, model: { inputName, instanceDims, ... },
 *        defaults: { preprocess, postprocess } }.
 */

/**
 * @param {Buffer} body
 * @param {Record<string, string | string[] | undefined>} headers
 * @param {any} ctx
 */
function preprocess(body, headers, ctx) {
  return ctx.defaults.preprocess(body, headers, ctx);
}

/**
 * @param {Record<string, Float32Array[]>} outputs
 * @param {unknown[]} instances
 * @param {any} ctx
 */
function postprocess(outputs, instances, ctx) {
  return ctx.defaults.postprocess(outputs, instances, ctx);
}

module.exports = { preprocess, postprocess };
