// @ts-check
'use strict';
/**
 * digits-train: classify scikit-learn's 8x8 digits (data/digits.csv: 64 pixel columns 0-16 and
 * the label; a link to functions/digits-classify/data/digits.csv, written by its train.py).
 * MODEL=softmax: softmax regression (650 parameters); MODEL=mlp (default): 64-32-10 ReLU MLP;
 * MODEL=mlp-wide: 64-256-10 (19,210 parameters), heavy enough per step to show data-parallel speed-up.
 * Pixels are scaled to [0, 1] on load.
 */

const defaults = { DATASET: 'data/digits.csv', MODEL: 'mlp', EPOCHS: 20, BATCH_SIZE: 32, LEARNING_RATE: 0.1 };

/**
 * @param {string} file
 * @param {{ nn: any }} ctx
 */
function loadDataset(file, ctx) {
  const data = ctx.nn.readCsv(file, { scale: 1 / 16 });
  if (data.inputSize !== 64 || data.numClasses !== 10) {
    throw new Error(`${file}: want 64 pixel columns and labels 0-9, got ${data.inputSize} columns and ${data.numClasses} classes`);
  }
  return data;
}

/**
 * @param {string} name
 * @param {{ nn: any, inputSize: number, numClasses: number, seed: number }} ctx
 */
function createModel(name, ctx) {
  const { inputSize, numClasses, seed } = ctx;
  if (name === 'softmax') return ctx.nn.mlp({ name, inputSize, hidden: [], numClasses, seed });
  if (name === 'mlp') return ctx.nn.mlp({ name, inputSize, hidden: [32], numClasses, seed });
  if (name === 'mlp-wide') return ctx.nn.mlp({ name, inputSize, hidden: [256], numClasses, seed });
  throw new Error(`MODEL=${name}: digits-train knows softmax, mlp and mlp-wide`);
}

module.exports = { defaults, loadDataset, createModel };
