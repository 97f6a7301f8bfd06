// @ts-check
'use strict';
/**
 * image-classify: MobileNetV2 (random weights) on 3x224x224 float inputs, for load and latency work.
 * Accepts the runtime's default formats with flat 150528-number instances (channel-major, as the
 * model's [3, 224, 224] input), or {"random": n} to synthesise n uniform [0, 1) images here,
 * 1 <= n <= 64, so load generators need not ship 1.5 MB of JSON per image.
 * Answers the default {"label", "index", "score"} per instance (labels are placeholders).
 */

const MAX_RANDOM = 64;

/**
 * @param {Buffer} body
 * @param {Record<string, string | string[] | undefined>} headers
 * @param {any} ctx
 */
function preprocess(body, headers, ctx) {
  // Cheap sniff: a random request is tiny; never parse a 1.5 MB body twice.
  if (body.length < 256) {
    let doc;
    try {
      doc = JSON.parse(body.toString('utf8'));
    } catch {
      doc = undefined;
    }
    if (doc && typeof doc === 'object' && !Array.isArray(doc) && 'random' in doc) {
      const n = doc.random;
      if (!Number.isInteger(n) || n < 1 || n > MAX_RANDOM) {
        throw new Error(`"random" must be an integer in [1, ${MAX_RANDOM}], got ${JSON.stringify(n)}`);
      }
      const size = ctx.model.instanceSize;
      const out = [];
      for (let k = 0; k < n; k++) {
        const x = new Float32Array(size);
        for (let i = 0; i < size; i++) x[i] = Math.random();
        out.push(x);
      }
      return out;
    }
  }
  return ctx.defaults.preprocess(body, headers, ctx);
}

module.exports = { preprocess };
