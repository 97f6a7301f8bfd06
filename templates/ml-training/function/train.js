// @ts-check
'use strict';
/**
 * Default train.js of a new ml-training function: a classifier on a numeric CSV (header line,
 * features, integer class label in the last column). MODEL picks the architecture:
 * "softmax" (softmax regression) or "mlp" / "default" (one hidden layer of 64 ReLU units).
 * Put your CSV at function/data/train.csv or point DATASET at it.
 */

/** Defaults for the harness's environment variables (the environment wins). */
const defaults = { DATASET: 'data/train.csv', MODEL: 'mlp' };

/**
 * @param {string} file absolute path from DATASET
 * @param {{ nn: any, seed: number }} ctx
 * @returns {{ x: Float32Array[], y: number[], inputSize: number, numClasses: number }}
 */
function loadDataset(file, ctx) {
  return ctx.nn.readCsv(file);
}

/**
 * @param {string} name MODEL
 * @param {{ nn: any, inputSize: number, numClasses: number, seed: number }} ctx
 */
function createModel(name, ctx) {
  const { inputSize, numClasses, seed } = ctx;
  if (name === 'softmax') return ctx.nn.mlp({ name, inputSize, hidden: [], numClasses, seed });
  if (name === 'mlp' || name === 'default') return ctx.nn.mlp({ name, inputSize, hidden: [64], numClasses, seed });
  throw new Error(`MODEL=${name}: this train.js knows softmax and mlp`);
}

module.exports = { defaults, loadDataset, createModel };
