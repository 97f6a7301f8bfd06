// @ts-check
'use strict';
/**
 * Test fixture: a model whose per-example loss is ½|w − x|², so the batch gradient is w − mean(x).
 * With examples x drawn around μ, the true gradient is G = w − μ and the per-example gradient
 * covariance is that of x: the gradient noise scale tr(Σ)/|G|² is known in closed form.
 * Labels are ignored. Used in-process by the data-parallel engine tests (no dataset file).
 */

/**
 * @param {string} name
 * @param {{ inputSize: number }} ctx
 */
function createModel(name, ctx) {
  const d = ctx.inputSize;
  const params = new Float32Array(d);
  return {
    name,
    params,
    /** @param {Float32Array[]} xs @param {number[]} _ys @param {Float32Array} grad */
    gradient(xs, _ys, grad) {
      grad.fill(0);
      let loss = 0;
      for (const x of xs) {
        for (let i = 0; i < d; i++) {
          const r = params[i] - x[i];
          grad[i] += r / xs.length;
          loss += 0.5 * r * r;
        }
      }
      return { loss, correct: 0 };
    },
    /** @param {Float32Array[]} xs */
    evaluate(xs) {
      let loss = 0;
      for (const x of xs) for (let i = 0; i < d; i++) loss += 0.5 * (params[i] - x[i]) ** 2;
      return { loss: loss / Math.max(1, xs.length), accuracy: 0 };
    },
  };
}

module.exports = { createModel, loadDataset: () => { throw new Error('quadratic fixture: data comes from the test'); } };
