// @ts-check
'use strict';
/**
 * Batches and the shared-memory all-reduce of the data-parallel workers (worker_threads in one process).
 *
 * Every worker writes the mean gradient of its shard into its own slot of `grads` (n × P floats in
 * a SharedArrayBuffer); after a barrier, worker r reduces chunk r of the parameter vector over all
 * n slots (a reduce-scatter: each element is summed by exactly one worker, in slot order, in
 * float64) and applies the SGD update to that chunk of the shared parameters; a second barrier
 * ends the step. The all-gather of a ring all-reduce is free here, since every worker reads the
 * same parameter memory. In the reduce each worker reads P gradient floats (its chunk of every
 * slot) and updates P/n parameters, and nothing is copied between threads; message passing would
 * copy about 2·n·P floats per step and cost event-loop hops.
 *
 * Shards: a global batch of B examples is split as [floor(r·B/n), floor((r+1)·B/n)), so local
 * batches differ by at most one, spread evenly (10 over 4 workers: 2, 3, 2, 3). The reduce
 * weights each slot by its shard size, so one step equals one SGD step on all B examples exactly
 * (up to float rounding), even when B is not a multiple of n or the epoch's last batch is short.
 */

const { permutation, rng } = require('./nn');

/** Slots of the control Int32Array. */
const CTRL = Object.freeze({
  COUNT: 0, // barrier arrivals in the current generation
  GEN: 1, // barrier generation, bumped by the last arrival
  STOP: 2, // set by the main thread: stop at the next step boundary
  DECIDE: 3, // worker 0's copy of STOP for this step, read by all after the closing barrier
  ABORT: 4, // set by the main thread when a worker failed: waiting workers throw
  LENGTH: 8,
});

/** Barrier waits re-check ABORT this often, ms. */
const WAIT_SLICE_MS = 100;
/** Loads of the generation word before sleeping on it (cheap wins when a core is free). */
const SPIN = 256;

class AbortedError extends Error {}

/**
 * Block until all n workers have arrived (a generation barrier on Atomics; seq-cst ordering
 * makes every write before the barrier visible to every worker after it).
 * @param {Int32Array} ctrl @param {number} n
 */
function barrier(ctrl, n) {
  const gen = Atomics.load(ctrl, CTRL.GEN);
  if (Atomics.add(ctrl, CTRL.COUNT, 1) === n - 1) {
    Atomics.store(ctrl, CTRL.COUNT, 0);
    Atomics.add(ctrl, CTRL.GEN, 1);
    Atomics.notify(ctrl, CTRL.GEN);
    return;
  }
  for (let i = 0; i < SPIN; i++) if (Atomics.load(ctrl, CTRL.GEN) !== gen) return;
  while (Atomics.load(ctrl, CTRL.GEN) === gen) {
    if (Atomics.load(ctrl, CTRL.ABORT)) throw new AbortedError('another worker failed');
    Atomics.wait(ctrl, CTRL.GEN, gen, WAIT_SLICE_MS);
  }
}

/**
 * The permutation of the training set for an epoch: a function of seed and epoch only, so every
 * worker, and every later run with any worker count or batch size, walks the same order; a
 * position in an epoch is therefore just an example offset into it.
 * @param {number} n @param {number} seed @param {number} epoch
 */
function epochOrder(n, seed, epoch) {
  return permutation(n, rng(seed * 7919 + epoch + 1));
}

/**
 * Worker r's examples of a batch of `count`: [start, end) within the batch.
 * @param {number} count @param {number} n @param {number} r
 * @returns {[number, number]}
 */
function shardRange(count, n, r) {
  return [Math.floor((r * count) / n), Math.floor(((r + 1) * count) / n)];
}

/** Local batch sizes of all n workers for a batch of `count`. @param {number} count @param {number} n */
function shardSizes(count, n) {
  return Array.from({ length: n }, (_, r) => {
    const [s, e] = shardRange(count, n, r);
    return e - s;
  });
}

/**
 * Reduce chunk r of the gradient slots (weights = shard size / batch size), apply
 * params -= lr · mean on that chunk, and return the chunk's share of |mean|².
 * @param {{ grads: Float32Array, params: Float32Array, sizes: number[], count: number, rank: number, lr: number }} a
 * @returns {number}
 */
function reduceScatterUpdate(a) {
  const { grads, params, sizes, count, rank, lr } = a;
  const n = sizes.length;
  const P = params.length;
  const [lo, hi] = shardRange(P, n, rank);
  const w = sizes.map((s) => s / count);
  let sq = 0;
  for (let k = lo; k < hi; k++) {
    let g = 0;
    for (let j = 0, off = k; j < n; j++, off += P) g += w[j] * grads[off];
    sq += g * g;
    params[k] -= lr * g;
  }
  return sq;
}

module.exports = { CTRL, barrier, epochOrder, shardRange, shardSizes, reduceScatterUpdate, AbortedError };
