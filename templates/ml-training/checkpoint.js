// @ts-check
'use strict';
/**
 * Checkpoints: one JSON file per save, `ckpt-<step>.json` in CHECKPOINT_DIR, written to a
 * temporary name, fsync'd and renamed, so a kill mid-write never leaves a torn latest file.
 * The two newest are kept. Loading takes the newest that parses.
 *
 * Version 2 records the position as (epoch, example offset into the epoch's permutation) and the
 * worker count, global batch and learning rate it was written with, so a job resumes with any
 * worker count or batch. Version 1 files (a minibatch index, single worker) are still read.
 */
const fs = require('node:fs');
const path = require('node:path');

const VERSION = 2;
const KEEP = 2;
const NAME = /^ckpt-(\d+)\.json$/;

/**
 * @typedef {object} EpochSums this epoch's sums so far (the progress line of a resumed epoch covers all of it)
 * @property {number} lossSum     summed training loss
 * @property {number} correct     training hits
 * @property {number} count       training examples
 * @property {number} trainMs     wall time of the SGD steps, ms
 * @property {number} gnsGradSq   Σ over data-parallel steps of the |G|² estimate
 * @property {number} gnsTrace    Σ over data-parallel steps of the tr(Σ) estimate
 * @property {number} gnsSteps    steps in those sums
 *
 * @typedef {object} Position
 * @property {number} step      SGD steps taken so far (all epochs, whatever their batch)
 * @property {number} epoch     epoch to continue (0-based)
 * @property {number} offset    examples of that epoch's permutation already trained on
 * @property {number} samples   training examples processed so far
 * @property {EpochSums} partial
 * @property {string} model
 * @property {number} seed
 * @property {string} reason    start | epoch | signal | done
 *
 * @typedef {object} Written   the configuration a checkpoint was written with (informational)
 * @property {number} workers
 * @property {number} globalBatch
 * @property {number} localBatch  largest per-worker batch
 * @property {number} learningRate
 *
 * @typedef {Position & Written & { version: number, paramCount: number, params: string, savedAt: string }} Checkpoint
 *   params: base64 of the Float32Array of parameters; savedAt: ISO time
 */

/** @param {string} dir @param {Position & Written} state @param {Float32Array} params @returns {string} path */
function saveCheckpoint(dir, state, params) {
  fs.mkdirSync(dir, { recursive: true });
  /** @type {Checkpoint} */
  const doc = {
    version: VERSION, ...state, paramCount: params.length, savedAt: new Date().toISOString(),
    params: Buffer.from(params.buffer, params.byteOffset, params.byteLength).toString('base64'),
  };
  const file = path.join(dir, `ckpt-${String(state.step).padStart(9, '0')}.json`);
  const tmp = `${file}.tmp-${process.pid}`;
  const fd = fs.openSync(tmp, 'w');
  try {
    fs.writeSync(fd, JSON.stringify(doc));
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(tmp, file);
  for (const old of list(dir).slice(KEEP)) fs.rmSync(path.join(dir, old), { force: true });
  return file;
}

/**
 * @param {string} dir
 * @returns {{ checkpoint: Checkpoint, params: Float32Array, file: string } | null}
 */
function loadLatestCheckpoint(dir) {
  if (!fs.existsSync(dir)) return null;
  for (const name of list(dir)) {
    const file = path.join(dir, name);
    try {
      /** @type {Checkpoint} */
      const doc = JSON.parse(fs.readFileSync(file, 'utf8'));
      if (doc.version !== VERSION && doc.version !== 1) continue;
      const buf = Buffer.from(doc.params, 'base64');
      const params = new Float32Array(buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength));
      if (params.length !== doc.paramCount) continue;
      return { checkpoint: doc, params, file };
    } catch {
      // unreadable: try the one before
    }
  }
  return null;
}

/** checkpoint file names, newest first @param {string} dir */
function list(dir) {
  return fs.readdirSync(dir).filter((n) => NAME.test(n)).sort().reverse();
}

/**
 * The position to resume from. A version-1 checkpoint holds a minibatch index, not an offset; it
 * was written by a single worker, and is taken to have used `batchSize` (the job's BATCH_SIZE).
 * @param {Checkpoint & { batch?: number }} c @param {number} batchSize
 * @returns {Position}
 */
function positionOf(c, batchSize) {
  const offset = c.version === 1 ? (c.batch ?? 0) * batchSize : c.offset;
  return {
    step: c.step, epoch: c.epoch, offset, samples: c.samples, model: c.model, seed: c.seed, reason: c.reason,
    partial: { ...{ lossSum: 0, correct: 0, count: 0, trainMs: 0, gnsGradSq: 0, gnsTrace: 0, gnsSteps: 0 }, .../** @type {Partial<EpochSums>} */ (c.partial) },
  };
}

module.exports = { saveCheckpoint, loadLatestCheckpoint, positionOf };
