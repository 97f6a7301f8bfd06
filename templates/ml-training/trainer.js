// @ts-check
'use strict';
/**
 * The training loop: epochs of shuffled minibatches, plain SGD, a held-out evaluation and a
 * gradient-noise pass per epoch, checkpoints, and a stop request honoured between minibatches.
 *
 * Shaped for data parallelism: `stepGradient` is the one place a gradient is produced; with
 * WORKERS > 1 each worker will take its shard of the minibatch and the gradients will be
 * all-reduced there before the update, and the epoch permutation (seeded by seed and epoch) is
 * already identical on every worker.
 */
const { performance } = require('node:perf_hooks');
const { permutation, rng } = require('./nn');
const { gradientNoiseScale } = require('./gns');

/** Yield to the event loop (signals, timers) at least this often, ms. */
const YIELD_EVERY_MS = 20;

/**
 * @typedef {import('./nn').Model} Model
 * @typedef {{ x: Float32Array[], y: number[] }} Split
 * @typedef {import('./checkpoint').Checkpoint} Checkpoint
 * @typedef {Omit<Checkpoint, 'version' | 'params' | 'paramCount' | 'savedAt'>} Position
 */

/**
 * Split examples into train and held-out test sets by a seeded permutation.
 * @param {{ x: Float32Array[], y: number[] }} data
 * @param {number} testFraction
 * @param {number} seed
 * @returns {{ train: Split, test: Split }}
 */
function splitDataset(data, testFraction, seed) {
  const order = permutation(data.x.length, rng(seed ^ 0x5eed));
  const nTest = Math.round(data.x.length * testFraction);
  const pick = (/** @type {number[]} */ idx) => ({ x: idx.map((i) => data.x[i]), y: idx.map((i) => data.y[i]) });
  return { test: pick(order.slice(0, nTest)), train: pick(order.slice(nTest)) };
}

class Trainer {
  /**
   * @param {object} deps
   * @param {import('./config').TrainConfig} deps.config
   * @param {Model} deps.model
   * @param {{ train: Split, test: Split }} deps.data
   * @param {(doc: Record<string, unknown>) => void} deps.emit  one JSON line on stdout
   * @param {(pos: Position, reason: string) => string} deps.checkpoint save, returns the path
   */
  constructor(deps) {
    this.config = deps.config;
    this.model = deps.model;
    this.data = deps.data;
    this.emit = deps.emit;
    this.checkpoint = deps.checkpoint;
    this.grad = new Float32Array(this.model.params.length);
    this.stopRequested = false;
  }

  /** Ask the loop to stop at the next minibatch boundary. */
  requestStop() {
    this.stopRequested = true;
  }

  /**
   * Train from `pos` to the configured epoch count, or until a stop is requested.
   * @param {Position} pos where to start (a fresh job or a checkpoint)
   * @returns {Promise<{ stopped: boolean, pos: Position }>}
   */
  async run(pos) {
    const { epochs, batchSize } = this.config;
    const { train } = this.data;
    const nBatches = Math.ceil(train.x.length / batchSize);
    let lastYield = performance.now();
    /** @type {Position} */
    let p = { ...pos, partial: { ...pos.partial } };
    while (p.epoch < epochs) {
      const order = permutation(train.x.length, rng(this.config.seed * 7919 + p.epoch + 1));
      for (; p.batch < nBatches; p.batch++) {
        if (this.stopRequested) return { stopped: true, pos: p };
        const idx = order.slice(p.batch * batchSize, (p.batch + 1) * batchSize);
        const t0 = performance.now();
        const r = this.stepGradient(idx.map((i) => train.x[i]), idx.map((i) => train.y[i]));
        this.applyUpdate();
        p.partial.trainMs += performance.now() - t0;
        p.partial.lossSum += r.loss;
        p.partial.correct += r.correct;
        p.partial.count += idx.length;
        p.samples += idx.length;
        p.step += 1;
        if (performance.now() - lastYield >= YIELD_EVERY_MS) {
          await new Promise((resolve) => setImmediate(resolve));
          lastYield = performance.now();
        }
      }
      this.report(p);
      p = { ...p, epoch: p.epoch + 1, batch: 0, partial: { lossSum: 0, correct: 0, count: 0, trainMs: 0 } };
      if (p.epoch % this.config.checkpointEvery === 0 && p.epoch < epochs) this.checkpoint(p, 'epoch');
      await new Promise((resolve) => setImmediate(resolve));
    }
    return { stopped: false, pos: p };
  }

  /**
   * The gradient of one minibatch into this.grad (the all-reduce point once WORKERS > 1).
   * @param {Float32Array[]} xs @param {number[]} ys
   */
  stepGradient(xs, ys) {
    return this.model.gradient(xs, ys, this.grad);
  }

  applyUpdate() {
    const { params } = this.model;
    const lr = this.config.learningRate;
    for (let i = 0; i < params.length; i++) params[i] -= lr * this.grad[i];
  }

  /** End of an epoch: held-out evaluation, gradient noise scale, one progress line. @param {Position} p */
  report(p) {
    const test = this.model.evaluate(this.data.test.x, this.data.test.y);
    const gns = this.noiseScale();
    const trainMs = p.partial.trainMs;
    this.emit({
      type: 'progress',
      epoch: p.epoch + 1,
      epochs: this.config.epochs,
      loss: round(p.partial.lossSum / Math.max(1, p.partial.count)),
      accuracy: round(test.accuracy),
      testLoss: round(test.loss),
      trainAccuracy: round(p.partial.correct / Math.max(1, p.partial.count)),
      samples: p.samples,
      examplesPerSec: trainMs > 0 ? Math.round((p.partial.count / trainMs) * 1000) : null,
      gradNoiseScale: gns.gnsSimple === null ? null : round(gns.gnsSimple),
      gnsBatches: gns.bBig / gns.bSmall,
      batchSize: this.config.batchSize,
      learningRate: this.config.learningRate,
      workers: this.config.workers,
      step: p.step,
    });
  }

  /**
   * Gradients of consecutive minibatches at the current weights (no update), up to
   * gnsMaxBatches of them, fed to the simple noise-scale estimator.
   */
  noiseScale() {
    const { batchSize, gnsMaxBatches } = this.config;
    const { train } = this.data;
    const k = Math.min(gnsMaxBatches, Math.floor(train.x.length / batchSize));
    const mean = new Float64Array(this.grad.length);
    const g = new Float32Array(this.grad.length);
    let sumSqNorms = 0;
    for (let b = 0; b < k; b++) {
      const xs = train.x.slice(b * batchSize, (b + 1) * batchSize);
      const ys = train.y.slice(b * batchSize, (b + 1) * batchSize);
      this.model.gradient(xs, ys, g);
      let sq = 0;
      for (let i = 0; i < g.length; i++) {
        sq += g[i] * g[i];
        mean[i] += g[i] / k;
      }
      sumSqNorms += sq;
    }
    return gradientNoiseScale({ sumSqNorms, count: k, batchSize, meanGrad: mean });
  }
}

/** @param {number} x */
const round = (x) => Math.round(x * 1e4) / 1e4;

module.exports = { Trainer, splitDataset };
