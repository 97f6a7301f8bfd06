// @ts-check
'use strict';
/**
 * Test fixture: a handler whose model builds on the main thread but throws in every data-parallel
 * worker thread, to check that a failed worker ends the job with exit 1 and a message (no hang).
 * DATASET must be an absolute path to the digits csv.
 */
const { isMainThread } = require('node:worker_threads');

module.exports = {
  defaults: { MODEL: 'softmax' },
  loadDataset: (/** @type {string} */ file, /** @type {{ nn: any }} */ ctx) => ctx.nn.readCsv(file, { scale: 1 / 16 }),
  createModel: (/** @type {string} */ name, /** @type {any} */ ctx) => {
    if (!isMainThread) throw new Error('fixture: no model in worker threads');
    return ctx.nn.mlp({ name, inputSize: ctx.inputSize, hidden: [], numClasses: ctx.numClasses, seed: ctx.seed });
  },
};
