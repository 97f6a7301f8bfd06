// @ts-check
'use strict';
/**
 * Checkpoints: one JSON file per save, `ckpt-<step>.json` in CHECKPOINT_DIR, written to a
 * temporary name, fsync'd and renamed, so a kill mid-write never leaves a torn latest file.
 * The two newest are kept. Loading takes the newest that parses.
 */
const fs = require('node:fs');
const path = require('node:path');

const VERSION = 1;
const KEEP = 2;
const NAME = /^ckpt-(\d+)\.json$/;

/**
 * @typedef {object} Checkpoint
 * @property {number} version
 * @property {number} step      SGD steps taken so far (all epochs)
 * @property {number} epoch     epoch to continue (0-based)
 * @property {number} batch     next minibatch within that epoch
 * @property {number} samples   training examples processed so far
 * @property {{ lossSum: number, correct: number, count: number, trainMs: number }} partial this epoch's sums so far
 * @property {string} model
 * @property {number} seed
 * @property {number} paramCount
 * @property {string} params    base64 of the Float32Array of parameters
 * @property {string} reason    epoch | signal | done
 * @property {string} savedAt   ISO time
 */

/** @param {string} dir @param {Omit<Checkpoint, 'version' | 'params' | 'paramCount' | 'savedAt'>} state @param {Float32Array} params @returns {string} path */
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
      if (doc.version !== VERSION) continue;
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

module.exports = { saveCheckpoint, loadLatestCheckpoint };
