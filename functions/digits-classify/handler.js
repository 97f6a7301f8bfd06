// @ts-check
'use strict';
/**
 * digits-classify: 8x8 grey-scale digits, pixel intensities 0-16 (scikit-learn's digits).
 * Accepts the runtime's default formats ({"instances": [...]}, {"data": [...]}, a bare array)
 * where each instance is 64 numbers in row-major order or an 8x8 nested array.
 * Answers, per instance, {"label": "7", "probability": 0.98, "probabilities": [10 numbers]}.
 */

/**
 * @param {Buffer} body
 * @param {Record<string, string | string[] | undefined>} headers
 * @param {any} ctx
 */
function preprocess(body, headers, ctx) {
  /** @type {unknown[]} */
  let instances;
  const text = body.toString('utf8');
  const doc = safeParse(text);
  if (isGrid(doc)) instances = [doc]; // a bare 8x8 grid is one instance
  else if (doc && typeof doc === 'object' && !Array.isArray(doc) && isGrid(/** @type {any} */ (doc).data)) {
    instances = [/** @type {any} */ (doc).data];
  } else instances = ctx.defaults.preprocess(body, headers, ctx);
  return instances.map((inst, i) => {
    if (isGrid(inst)) return /** @type {number[][]} */ (inst).flat();
    if (Array.isArray(inst) && Array.isArray(inst[0])) throw new Error(`instance ${i} is a nested array but not 8x8 numbers`);
    return inst; // flat: the runtime checks the length
  });
}

/**
 * @param {Record<string, Float32Array[]>} outputs
 * @param {unknown[]} instances
 * @param {any} ctx
 */
function postprocess(outputs, instances, ctx) {
  const probs = outputs.probabilities;
  /** @type {string[]} */
  const labels = ctx.labels || Array.from(probs[0], (_, i) => String(i));
  return probs.map((row) => {
    let best = 0;
    for (let i = 1; i < row.length; i++) if (row[i] > row[best]) best = i;
    return {
      label: labels[best],
      probability: round(row[best]),
      probabilities: Array.from(row, round),
    };
  });
}

/** @param {unknown} x an 8x8 nested array of numbers */
function isGrid(x) {
  return Array.isArray(x) && x.length === 8 && x.every((r) => Array.isArray(r) && r.length === 8 && r.every((v) => typeof v === 'number'));
}

/** @param {string} text */
function safeParse(text) {
  try {
    return JSON.parse(text);
  } catch {
    return undefined; // the default preprocess reports the JSON error
  }
}

/** @param {number} x */
const round = (x) => Math.round(x * 1e4) / 1e4;

module.exports = { preprocess, postprocess };
