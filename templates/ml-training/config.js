// @ts-check
'use strict';
/**
 * Training job configuration, parsed once: the environment first, then the handler's
 * `train.js` `defaults`, then the harness defaults below. Nothing else reads `process.env`.
 */
const path = require('node:path');

/**
 * @typedef {object} TrainConfig
 * @property {number} epochs          epochs to reach (a resumed job runs the remainder)
 * @property {number} batchSize       GLOBAL batch: examples per SGD step over all workers together
 * @property {number} learningRate    SGD step size in effect (BASE_LEARNING_RATE × BATCH_SIZE / BASE_BATCH_SIZE
 *                                    when BASE_LEARNING_RATE is set, else LEARNING_RATE)
 * @property {number | null} baseBatchSize   BASE_BATCH_SIZE: the batch the base rate was tuned for, and M0 of
 *                                    statistical efficiency (null: not set; efficiency is then relative to M0 = 1)
 * @property {number | null} baseLearningRate BASE_LEARNING_RATE (null: not set)
 * @property {string} dataset         absolute path of the dataset file
 * @property {string} model           model name handed to train.js createModel()
 * @property {string} checkpointDir   absolute path; created if missing
 * @property {number} checkpointGraceMs longest time from SIGTERM to exit, ms
 * @property {number} checkpointEvery write a checkpoint every this many epochs
 * @property {number} testFraction    share of the examples held out for the accuracy report
 * @property {number} seed            seeds the split, the shuffles and the initial weights
 * @property {number} gnsMaxBatches   most minibatches in the gradient-noise pass per epoch
 * @property {number} workers         data-parallel workers (threads); each takes its shard of every global batch
 * @property {boolean} watchParent    exit (after a checkpoint) when the parent process goes away
 * @property {string} functionDir     absolute path of the handler folder
 */

class ConfigError extends Error {}

const HARNESS_DEFAULTS = {
  EPOCHS: '10', BATCH_SIZE: '32', LEARNING_RATE: '0.1', MODEL: 'default', CHECKPOINT_DIR: 'checkpoints',
  CHECKPOINT_GRACE_MS: '5000', CHECKPOINT_EVERY: '1', TEST_FRACTION: '0.2', SEED: '0',
  GNS_MAX_BATCHES: '64', WORKERS: '1', DATASET: '', BASE_BATCH_SIZE: '', BASE_LEARNING_RATE: '',
};

/** Most data-parallel workers one job may ask for. */
const MAX_WORKERS = 64;

/**
 * @param {NodeJS.ProcessEnv} env
 * @param {Record<string, string | number>} handlerDefaults `defaults` exported by train.js
 * @param {string} cwd the image directory (holds `function/`)
 * @returns {TrainConfig}
 */
function parseConfig(env, handlerDefaults, cwd) {
  /** @param {keyof typeof HARNESS_DEFAULTS} name */
  const raw = (name) => {
    const v = env[name] !== undefined && env[name] !== '' ? env[name] : handlerDefaults[name];
    return v === undefined ? HARNESS_DEFAULTS[name] : String(v);
  };
  /** @param {keyof typeof HARNESS_DEFAULTS} name @param {number} min @param {number} max @param {boolean} int */
  const num = (name, min, max, int) => {
    const s = raw(name);
    const n = Number(s);
    if (s.trim() === '' || !Number.isFinite(n) || (int && !Number.isInteger(n)) || n < min || n > max) {
      throw new ConfigError(`${name}=${JSON.stringify(s)}: want ${int ? 'an integer' : 'a number'} in [${min}, ${max}]`);
    }
    return n;
  };
  const functionDir = path.resolve(cwd, env.FUNCTION_DIR || 'function');
  const dataset = raw('DATASET');
  if (!dataset) throw new ConfigError('DATASET is not set and train.js has no defaults.DATASET');
  const workers = num('WORKERS', 1, MAX_WORKERS, true);
  const batchSize = num('BATCH_SIZE', 1, 1e6, true);
  if (batchSize < workers) {
    throw new ConfigError(`BATCH_SIZE=${batchSize} with WORKERS=${workers}: the global batch must give every worker at least one example`);
  }
  const baseBatchSize = raw('BASE_BATCH_SIZE') === '' ? null : num('BASE_BATCH_SIZE', 1, 1e6, true);
  const baseLearningRate = raw('BASE_LEARNING_RATE') === '' ? null : num('BASE_LEARNING_RATE', 0, 1e3, false);
  let learningRate;
  if (baseLearningRate !== null) {
    if (baseBatchSize === null) throw new ConfigError(`BASE_LEARNING_RATE=${baseLearningRate} needs BASE_BATCH_SIZE (the batch that rate was tuned for)`);
    if (env.LEARNING_RATE !== undefined && env.LEARNING_RATE !== '') {
      throw new ConfigError(`LEARNING_RATE=${JSON.stringify(env.LEARNING_RATE)} and BASE_LEARNING_RATE=${baseLearningRate} are both set; ` +
        'set one (with BASE_LEARNING_RATE the rate is BASE_LEARNING_RATE × BATCH_SIZE / BASE_BATCH_SIZE)');
    }
    learningRate = (baseLearningRate * batchSize) / baseBatchSize;
  } else {
    learningRate = num('LEARNING_RATE', 0, 1e3, false);
  }
  return {
    epochs: num('EPOCHS', 1, 1e6, true),
    batchSize,
    learningRate,
    baseBatchSize,
    baseLearningRate,
    dataset: path.resolve(functionDir, dataset),
    model: raw('MODEL'),
    checkpointDir: path.resolve(cwd, raw('CHECKPOINT_DIR')),
    checkpointGraceMs: num('CHECKPOINT_GRACE_MS', 0, 600_000, true),
    checkpointEvery: num('CHECKPOINT_EVERY', 1, 1e6, true),
    testFraction: num('TEST_FRACTION', 0, 0.9, false),
    seed: num('SEED', 0, 2 ** 31 - 1, true),
    gnsMaxBatches: num('GNS_MAX_BATCHES', 0, 1e6, true),
    workers,
    watchParent: env.MLFAAS_WATCH_PARENT !== '0',
    functionDir,
  };
}

module.exports = { parseConfig, ConfigError, MAX_WORKERS };
