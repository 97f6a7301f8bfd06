// @ts-check
'use strict';
/**
 * text-encoder: a tiny transformer encoder sentiment classifier (see README.md). The model takes
 * int64 input_ids, attention_mask and token_type_ids, each [batch, seq]; this handler tokenizes
 * text with vocab.json beside it, so v1 callers send text:
 *   {"text": "..."}, {"instances": ["...", ...]}, {"instances": [{"text": "...", "text_pair": "..."}]}
 * and instances already tokenized ({"input_ids": [...], "attention_mask": [...], ...}) pass through.
 * Sequences are padded to a bucket length (8, 16, 32 or 64) so requests of similar length share a
 * batch: the runtime concatenates only requests whose seq lengths agree.
 * Answers, per instance: {"label", "score", "scores": {negative, neutral, positive}, "tokens"}.
 */
const fs = require('node:fs');
const path = require('node:path');

const MAX_LEN = 64;
const BUCKETS = [8, 16, 32, 64];
/** @type {Record<string, number>} */
const VOCAB = JSON.parse(fs.readFileSync(path.join(__dirname, 'vocab.json'), 'utf8'));
const { '[PAD]': PAD, '[UNK]': UNK, '[CLS]': CLS, '[SEP]': SEP } = VOCAB;

/** @param {string} text @returns {string[]} lower-case words (apostrophes kept: "isn't") */
function words(text) {
  return text.toLowerCase().match(/[a-z]+(?:'[a-z]+)?/g) || [];
}

/**
 * @param {string} text @param {string} [pair]
 * @returns {{ input_ids: number[], attention_mask: number[], token_type_ids: number[], tokens: number }}
 */
function encode(text, pair) {
  const ids = [CLS, ...words(text).map((w) => VOCAB[w] ?? UNK)];
  const types = ids.map(() => 0);
  if (pair !== undefined) {
    const second = [SEP, ...words(pair).map((w) => VOCAB[w] ?? UNK)];
    ids.push(...second);
    types.push(...second.map(() => 1));
  }
  const n = Math.min(ids.length, MAX_LEN);
  const len = BUCKETS.find((b) => b >= n) || MAX_LEN;
  const pad = (/** @type {number[]} */ a, /** @type {number} */ v) => [...a.slice(0, n), ...Array(len - n).fill(v)];
  return { input_ids: pad(ids, PAD), attention_mask: pad(ids.map(() => 1), 0), token_type_ids: pad(types, 0), tokens: n };
}

/**
 * @param {unknown} inst @param {number} i
 * @returns {unknown} what the runtime's v1 path takes: {input_ids, attention_mask, token_type_ids}
 */
function toModelInstance(inst, i) {
  if (typeof inst === 'string') return strip(encode(inst));
  if (inst && typeof inst === 'object' && !Array.isArray(inst)) {
    const o = /** @type {Record<string, unknown>} */ (inst);
    if (typeof o.text === 'string') {
      if (o.text_pair !== undefined && typeof o.text_pair !== 'string') throw new Error(`instance ${i}: "text_pair" must be a string`);
      return strip(encode(o.text, /** @type {string | undefined} */ (o.text_pair)));
    }
    if (o.text !== undefined) throw new Error(`instance ${i}: "text" must be a string`);
    if (Array.isArray(o.input_ids)) {
      const ids = /** @type {unknown[]} */ (o.input_ids);
      // already tokenized: the mask and the segments default to all ones / all zeros
      return {
        input_ids: ids,
        attention_mask: o.attention_mask ?? ids.map(() => 1),
        token_type_ids: o.token_type_ids ?? ids.map(() => 0),
      };
    }
  }
  throw new Error(`instance ${i}: want a string, {"text": "..."} or {"input_ids": [...]}`);
}

/** @param {ReturnType<typeof encode>} e */
const strip = ({ input_ids, attention_mask, token_type_ids }) => ({ input_ids, attention_mask, token_type_ids });

/**
 * @param {Buffer} body
 * @param {Record<string, string | string[] | undefined>} headers
 * @param {any} ctx
 */
function preprocess(body, headers, ctx) {
  /** @type {unknown} */
  let doc;
  try {
    doc = JSON.parse(body.toString('utf8'));
  } catch {
    doc = undefined;
  }
  /** @type {unknown[]} */
  let instances;
  if (doc && typeof doc === 'object' && !Array.isArray(doc) && 'text' in doc) instances = [doc];
  else instances = ctx.defaults.preprocess(body, headers, ctx);
  return instances.map(toModelInstance);
}

/**
 * @param {Record<string, Float32Array[]>} outputs
 * @param {unknown[]} instances
 * @param {any} ctx
 */
function postprocess(outputs, instances, ctx) {
  /** @type {string[]} */
  const labels = ctx.labels || ['negative', 'neutral', 'positive'];
  return outputs.probabilities.map((row, i) => {
    let best = 0;
    for (let k = 1; k < row.length; k++) if (row[k] > row[best]) best = k;
    /** @type {Record<string, number>} */
    const scores = {};
    labels.forEach((l, k) => (scores[l] = round(row[k])));
    // the instance as preprocess made it: the tokens the model attended to are the mask's ones
    const mask = /** @type {any} */ (instances[i]).attention_mask;
    const tokens = Array.isArray(mask) ? mask.filter((v) => Number(v) !== 0).length : undefined;
    return { label: labels[best], score: round(row[best]), scores, tokens };
  });
}

/** @param {number} x */
const round = (x) => Math.round(x * 1e4) / 1e4;

module.exports = { preprocess, postprocess, encode, words };
