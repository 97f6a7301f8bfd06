// @ts-check
'use strict';
/**
 * A small neural-network kit in plain JavaScript, handed to train.js: a seeded RNG, CSV reading,
 * and a multi-layer perceptron (ReLU hidden layers, softmax cross-entropy) with exact gradients.
 * With no hidden layers the MLP is softmax (multinomial logistic) regression.
 */
const fs = require('node:fs');

/** mulberry32: a small seeded PRNG, uniform in [0, 1). @param {number} seed */
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Fisher-Yates permutation of 0..n-1. @param {number} n @param {() => number} rand */
function permutation(n, rand) {
  const p = Array.from({ length: n }, (_, i) => i);
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [p[i], p[j]] = [p[j], p[i]];
  }
  return p;
}

/**
 * Numeric CSV with a header line; the label is the last column (an integer class index).
 * @param {string} file
 * @param {{ scale?: number }} [opts] multiply every feature by this (e.g. 1/16)
 * @returns {{ x: Float32Array[], y: number[], inputSize: number, numClasses: number, columns: string[] }}
 */
function readCsv(file, opts = {}) {
  const scale = opts.scale ?? 1;
  const lines = fs.readFileSync(file, 'utf8').split('\n').filter((l) => l.trim() !== '');
  const columns = lines[0].split(',');
  const inputSize = columns.length - 1;
  /** @type {Float32Array[]} */
  const x = [];
  /** @type {number[]} */
  const y = [];
  for (let r = 1; r < lines.length; r++) {
    const cells = lines[r].split(',');
    if (cells.length !== columns.length) throw new Error(`${file}:${r + 1}: ${cells.length} cells, header has ${columns.length}`);
    const row = new Float32Array(inputSize);
    for (let i = 0; i < inputSize; i++) row[i] = Number(cells[i]) * scale;
    const label = Number(cells[inputSize]);
    if (!Number.isInteger(label) || label < 0) throw new Error(`${file}:${r + 1}: label ${cells[inputSize]} is not a class index`);
    x.push(row);
    y.push(label);
  }
  return { x, y, inputSize, numClasses: Math.max(...y) + 1, columns };
}

/**
 * @typedef {object} Model
 * @property {string} name
 * @property {Float32Array} params  every weight and bias, flat; the harness updates it in place
 * @property {(xs: Float32Array[], ys: number[], grad: Float32Array) => { loss: number, correct: number }} gradient
 *   writes the mean gradient of the loss over the batch into grad (overwriting it) and returns
 *   the summed loss and the number of correct predictions
 * @property {(xs: Float32Array[], ys: number[]) => { loss: number, accuracy: number }} evaluate mean loss
 */

/**
 * @param {{ inputSize: number, hidden: number[], numClasses: number, seed: number, name?: string }} spec
 * @returns {Model}
 */
function mlp(spec) {
  const sizes = [spec.inputSize, ...spec.hidden, spec.numClasses];
  /** @type {Array<{ nIn: number, nOut: number, w: number, b: number }>} offsets into params */
  const layers = [];
  let total = 0;
  for (let l = 0; l + 1 < sizes.length; l++) {
    const nIn = sizes[l];
    const nOut = sizes[l + 1];
    layers.push({ nIn, nOut, w: total, b: total + nIn * nOut });
    total += nIn * nOut + nOut;
  }
  const params = new Float32Array(total);
  const rand = rng(spec.seed);
  for (const L of layers) {
    const bound = Math.sqrt(6 / (L.nIn + L.nOut)); // Glorot uniform
    for (let i = 0; i < L.nIn * L.nOut; i++) params[L.w + i] = (2 * rand() - 1) * bound;
  }
  const acts = sizes.map((n) => new Float64Array(n)); // activations per layer (post-ReLU)
  const deltas = sizes.map((n) => new Float64Array(n));

  /** forward one example; returns the softmax probabilities in acts[last] @param {Float32Array} x */
  function forward(x) {
    for (let i = 0; i < sizes[0]; i++) acts[0][i] = x[i];
    for (let l = 0; l < layers.length; l++) {
      const L = layers[l];
      const inp = acts[l];
      const out = acts[l + 1];
      const last = l === layers.length - 1;
      for (let o = 0; o < L.nOut; o++) {
        let s = params[L.b + o];
        const row = L.w + o * L.nIn;
        for (let i = 0; i < L.nIn; i++) s += params[row + i] * inp[i];
        out[o] = last || s > 0 ? s : 0;
      }
    }
    const out = acts[acts.length - 1];
    let max = -Infinity;
    for (let o = 0; o < out.length; o++) max = Math.max(max, out[o]);
    let z = 0;
    for (let o = 0; o < out.length; o++) z += out[o] = Math.exp(out[o] - max);
    for (let o = 0; o < out.length; o++) out[o] /= z;
    return out;
  }

  /** @param {Float64Array} p @param {number} y */
  const lossAndHit = (p, y) => {
    let best = 0;
    for (let o = 1; o < p.length; o++) if (p[o] > p[best]) best = o;
    return { loss: -Math.log(Math.max(p[y], 1e-12)), hit: best === y ? 1 : 0 };
  };

  return {
    name: spec.name || `mlp[${sizes.join('-')}]`,
    params,
    gradient(xs, ys, grad) {
      grad.fill(0);
      let loss = 0;
      let correct = 0;
      const n = xs.length;
      for (let k = 0; k < n; k++) {
        const p = forward(xs[k]);
        const r = lossAndHit(p, ys[k]);
        loss += r.loss;
        correct += r.hit;
        // d(loss)/d(logits) = p - onehot(y), averaged over the batch
        const top = deltas[deltas.length - 1];
        for (let o = 0; o < p.length; o++) top[o] = (p[o] - (o === ys[k] ? 1 : 0)) / n;
        for (let l = layers.length - 1; l >= 0; l--) {
          const L = layers[l];
          const inp = acts[l];
          const d = deltas[l + 1];
          const dIn = deltas[l];
          if (l > 0) dIn.fill(0);
          for (let o = 0; o < L.nOut; o++) {
            const g = d[o];
            if (g === 0) continue;
            grad[L.b + o] += g;
            const row = L.w + o * L.nIn;
            for (let i = 0; i < L.nIn; i++) {
              grad[row + i] += g * inp[i];
              if (l > 0) dIn[i] += g * params[row + i];
            }
          }
          if (l > 0) for (let i = 0; i < L.nIn; i++) if (inp[i] <= 0) dIn[i] = 0; // ReLU
        }
      }
      return { loss, correct };
    },
    evaluate(xs, ys) {
      let loss = 0;
      let correct = 0;
      for (let k = 0; k < xs.length; k++) {
        const r = lossAndHit(forward(xs[k]), ys[k]);
        loss += r.loss;
        correct += r.hit;
      }
      return xs.length ? { loss: loss / xs.length, accuracy: correct / xs.length } : { loss: NaN, accuracy: NaN };
    },
  };
}

module.exports = { rng, permutation, readCsv, mlp };
