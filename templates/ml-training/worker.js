// @ts-check
'use strict';
/**
 * One data-parallel worker (a worker_thread started by parallel.js). It builds its own replica of
 * the model with train.js createModel(), reads the training set and the parameters from shared
 * memory, and on each `run` command trains from (epoch, offset) to the end of the epoch, a step
 * limit, or a stop request: per global step it computes the gradient of its shard, meets the
 * others at a barrier, reduces and applies its chunk of the update (allreduce.js), and meets them
 * again. It then posts its own sums (loss, hits, examples, gradient-noise terms) to the main thread.
 */
const { parentPort, workerData } = require('node:worker_threads');
const { performance } = require('node:perf_hooks');
const nn = require('./nn');
const { CTRL, barrier, epochOrder, shardRange, shardSizes, reduceScatterUpdate } = require('./allreduce');
const { twoBatchTerms } = require('./gns');

/**
 * @typedef {object} WorkerInit
 * @property {number} rank
 * @property {number} workers
 * @property {string} handlerFile
 * @property {string} modelName
 * @property {number} seed
 * @property {number} inputSize
 * @property {number} numClasses
 * @property {number} trainCount
 * @property {SharedArrayBuffer} x       trainCount × inputSize float32
 * @property {SharedArrayBuffer} y       trainCount int32
 * @property {SharedArrayBuffer} params  P float32
 * @property {SharedArrayBuffer} grads   workers × P float32
 * @property {SharedArrayBuffer} ctrl    CTRL.LENGTH int32
 *
 * @typedef {{ cmd: 'run', epoch: number, offset: number, globalBatch: number, learningRate: number, maxSteps: number }} RunCommand
 * @typedef {{ lossSum: number, correct: number, count: number, gnsGradSq: number, gnsTrace: number, gnsSteps: number,
 *   offset: number, steps: number, stopped: boolean }} RunResult
 */

async function main() {
  if (!parentPort) throw new Error('worker.js runs as a worker_thread');
  const port = parentPort;
  /** @type {WorkerInit} */
  const init = workerData;
  const { rank, workers: n, trainCount, inputSize } = init;
  /** @type {any} */
  const handler = require(init.handlerFile);
  const model = await handler.createModel(init.modelName, { nn, inputSize, numClasses: init.numClasses, seed: init.seed });
  const params = new Float32Array(init.params);
  const P = params.length;
  if (model.params.length !== P) throw new Error(`worker ${rank}: model has ${model.params.length} parameters, the main thread's ${P}`);
  const grads = new Float32Array(init.grads);
  const grad = grads.subarray(rank * P, (rank + 1) * P);
  const ctrl = new Int32Array(init.ctrl);
  const xAll = new Float32Array(init.x);
  const yAll = new Int32Array(init.y);
  const rows = Array.from({ length: trainCount }, (_, i) => xAll.subarray(i * inputSize, (i + 1) * inputSize));

  /** @type {{ epoch: number, order: number[] } | null} */
  let cached = null;

  /** @param {RunCommand} c @returns {RunResult} */
  function run(c) {
    if (!cached || cached.epoch !== c.epoch) cached = { epoch: c.epoch, order: epochOrder(trainCount, init.seed, c.epoch) };
    const { order } = cached;
    const r = { lossSum: 0, correct: 0, count: 0, gnsGradSq: 0, gnsTrace: 0, gnsSteps: 0, offset: c.offset, steps: 0, stopped: false };
    while (r.offset < trainCount && r.steps < c.maxSteps) {
      const count = Math.min(c.globalBatch, trainCount - r.offset);
      const sizes = shardSizes(count, n);
      const [s, e] = shardRange(count, n, rank);
      model.params.set(params);
      let smallSq = 0;
      if (e > s) {
        const idx = order.slice(r.offset + s, r.offset + e);
        const out = model.gradient(idx.map((i) => rows[i]), idx.map((i) => yAll[i]), grad);
        r.lossSum += out.loss;
        r.correct += out.correct;
        r.count += e - s;
        if (n > 1) for (let k = 0; k < P; k++) smallSq += grad[k] * grad[k];
      } else {
        grad.fill(0);
      }
      barrier(ctrl, n);
      const bigSq = reduceScatterUpdate({ grads, params, sizes, count, rank, lr: c.learningRate });
      if (rank === 0) Atomics.store(ctrl, CTRL.DECIDE, Atomics.load(ctrl, CTRL.STOP));
      barrier(ctrl, n);
      // Noise-scale terms: only steps where every worker had examples (B_small < B_big).
      if (n > 1 && sizes[0] > 0) {
        const bSmall = n / sizes.reduce((acc, b) => acc + 1 / b, 0);
        const t = twoBatchTerms(smallSq / n, bigSq, bSmall, count);
        r.gnsGradSq += t.gradSq;
        r.gnsTrace += t.traceSigma;
        r.gnsSteps += 1;
      }
      r.offset += count;
      r.steps += 1;
      if (Atomics.load(ctrl, CTRL.DECIDE)) {
        r.stopped = true;
        break;
      }
    }
    return r;
  }

  port.on('message', (/** @type {RunCommand | { cmd: 'exit' }} */ msg) => {
    if (msg.cmd === 'exit') {
      port.close();
      return;
    }
    const t0 = performance.now();
    try {
      const result = run(msg);
      port.postMessage({ type: 'result', rank, result, ms: performance.now() - t0 });
    } catch (err) {
      port.postMessage({ type: 'error', rank, message: err instanceof Error ? err.stack || err.message : String(err) });
    }
  });
  port.postMessage({ type: 'ready', rank });
}

main().catch((err) => {
  if (parentPort) parentPort.postMessage({ type: 'error', rank: workerData && workerData.rank, message: err instanceof Error ? err.stack || err.message : String(err) });
});
