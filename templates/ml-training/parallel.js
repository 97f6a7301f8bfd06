// @ts-check
'use strict';
/**
 * The data-parallel engine as the main thread sees it: n worker threads (worker.js), the shared
 * memory they train in (training set, parameters, gradient slots, control words), and `run()`,
 * which has them train from a position in an epoch and sums up what they report. The main thread
 * never blocks: it waits for messages, so signals are handled while the workers train, and a stop
 * request is a store into shared memory that the workers honour at the next step boundary.
 */
const path = require('node:path');
const { performance } = require('node:perf_hooks');
const { Worker } = require('node:worker_threads');
const { CTRL } = require('./allreduce');

/**
 * @typedef {import('./worker').RunResult} RunResult
 * @typedef {{ x: Float32Array[], y: number[] }} Split
 */

class DataParallel {
  /**
   * Start the workers and wait until each has built its model replica.
   * @param {object} o
   * @param {number} o.workers
   * @param {string} o.handlerFile absolute path of train.js
   * @param {string} o.modelName
   * @param {number} o.seed
   * @param {number} o.numClasses
   * @param {Split} o.train
   * @param {Float32Array} o.params initial parameters (copied into shared memory)
   * @returns {Promise<DataParallel>}
   */
  static async start(o) {
    const dp = new DataParallel(o);
    await dp.ready;
    return dp;
  }

  /** @param {Parameters<typeof DataParallel.start>[0]} o */
  constructor(o) {
    const n = o.workers;
    const N = o.train.x.length;
    const inputSize = N ? o.train.x[0].length : 0;
    const P = o.params.length;
    const xBuf = new SharedArrayBuffer(4 * N * inputSize);
    const x = new Float32Array(xBuf);
    o.train.x.forEach((row, i) => x.set(row, i * inputSize));
    const yBuf = new SharedArrayBuffer(4 * N);
    new Int32Array(yBuf).set(o.train.y);
    const paramsBuf = new SharedArrayBuffer(4 * P);
    /** Parameters the workers train, shared with them; read or write only between runs. */
    this.params = new Float32Array(paramsBuf);
    this.params.set(o.params);
    this.ctrl = new Int32Array(new SharedArrayBuffer(4 * CTRL.LENGTH));
    const gradsBuf = new SharedArrayBuffer(4 * n * P);
    this.n = n;
    this.trainCount = N;
    /** @type {((msg: any) => void) | null} collects the current run's replies */
    this.onReply = null;
    /** @type {Error | null} */
    this.failure = null;
    /** @type {Array<(err: Error) => void>} */
    this.failureListeners = [];
    this.workers = Array.from({ length: n }, (_, rank) => new Worker(path.join(__dirname, 'worker.js'), {
      workerData: {
        rank, workers: n, handlerFile: o.handlerFile, modelName: o.modelName, seed: o.seed, inputSize,
        numClasses: o.numClasses, trainCount: N, x: xBuf, y: yBuf, params: paramsBuf, grads: gradsBuf, ctrl: this.ctrl.buffer,
      },
    }));
    let readyCount = 0;
    /** @type {Promise<void>} */
    this.ready = new Promise((resolve, reject) => {
      this.failureListeners.push(reject);
      this.workers.forEach((w, rank) => {
        w.on('message', (msg) => {
          if (msg.type === 'ready') {
            if (++readyCount === n) resolve();
          } else if (msg.type === 'error') {
            this.fail(new Error(`worker ${rank}: ${msg.message}`));
          } else if (this.onReply) {
            this.onReply(msg);
          }
        });
        w.on('error', (err) => this.fail(new Error(`worker ${rank}: ${err.stack || err.message}`)));
        w.on('exit', (code) => {
          if (!this.closing) this.fail(new Error(`worker ${rank} exited with code ${code}`));
        });
      });
    });
    this.closing = false;
  }

  /** A worker failed: release the others from their barriers and fail the waiting caller. @param {Error} err */
  fail(err) {
    if (this.failure) return;
    this.failure = err;
    Atomics.store(this.ctrl, CTRL.ABORT, 1);
    Atomics.notify(this.ctrl, CTRL.GEN);
    for (const l of this.failureListeners.splice(0)) l(err);
  }

  /** Ask the workers to stop after the step they are in (safe from a signal handler). */
  requestStop() {
    Atomics.store(this.ctrl, CTRL.STOP, 1);
  }

  /**
   * Train from `offset` in `epoch` to the end of the epoch, `maxSteps` steps, or a stop request.
   * @param {{ epoch: number, offset: number, globalBatch: number, learningRate: number, maxSteps?: number }} c
   * @returns {Promise<RunResult & { ms: number }>} the workers' sums; offset/steps/stopped agree across workers
   */
  run(c) {
    if (this.failure) return Promise.reject(this.failure);
    if (this.onReply) return Promise.reject(new Error('DataParallel.run: a run is already in progress'));
    const cmd = { cmd: 'run', epoch: c.epoch, offset: c.offset, globalBatch: c.globalBatch, learningRate: c.learningRate, maxSteps: c.maxSteps ?? Infinity };
    Atomics.store(this.ctrl, CTRL.DECIDE, 0);
    const t0 = performance.now();
    return new Promise((resolve, reject) => {
      /** @type {RunResult[]} */
      const results = [];
      this.failureListeners.push(reject);
      this.onReply = (msg) => {
        if (msg.type !== 'result') return;
        results[msg.rank] = msg.result;
        if (results.filter(Boolean).length < this.n) return;
        this.onReply = null;
        this.failureListeners = this.failureListeners.filter((l) => l !== reject);
        const lead = results[0];
        for (const r of results) {
          if (r.offset !== lead.offset || r.steps !== lead.steps || r.stopped !== lead.stopped) {
            reject(new Error(`workers disagree on the position: ${JSON.stringify(results.map((x) => [x.offset, x.steps, x.stopped]))}`));
            return;
          }
        }
        const sum = (/** @type {keyof RunResult} */ k) => results.reduce((acc, r) => acc + Number(r[k]), 0);
        resolve({
          lossSum: sum('lossSum'), correct: sum('correct'), count: sum('count'),
          gnsGradSq: sum('gnsGradSq'), gnsTrace: sum('gnsTrace'), gnsSteps: lead.gnsSteps,
          offset: lead.offset, steps: lead.steps, stopped: lead.stopped, ms: performance.now() - t0,
        });
      };
      for (const w of this.workers) w.postMessage(cmd);
    });
  }

  /** Stop the threads. */
  async close() {
    this.closing = true;
    await Promise.all(this.workers.map((w) => w.terminate()));
  }
}

module.exports = { DataParallel };
