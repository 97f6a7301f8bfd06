// @ts-check
'use strict';
/**
 * The training loop, on the main thread: it drives the data-parallel engine (parallel.js) an epoch
 * at a time, and between epochs evaluates on the held-out split, reports progress with the
 * gradient noise scale, and checkpoints. Positions are (epoch, example offset) into the epoch's
 * seeded permutation, so a job can continue with another worker count or global batch.
 */
const { permutation, rng } = require('./nn');
const { gradientNoiseScale, noiseScaleFromSums, statisticalEfficiency } = require('./gns');

/**
 * @typedef {import('./nn').Model} Model
 * @typedef {{ x: Float32Array[], y: number[] }} Split
 * @typedef {import('./checkpoint').Checkpoint} Checkpoint
 * @typedef {import('./checkpoint').Position} Position
 * @typedef {import('./parallel').DataParallel} DataParallel
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

/** @returns {Position['partial']} */
const emptyPartial = () => ({ lossSum: 0, correct: 0, count: 0, trainMs: 0, gnsGradSq: 0, gnsTrace: 0, gnsSteps: 0 });

/** Largest per-worker batch: ceil(globalBatch / workers). @param {number} globalBatch @param {number} workers */
const localBatchOf = (globalBatch, workers) => Math.ceil(globalBatch / workers);

class Trainer {
  /**
   * @param {object} deps
   * @param {import('./config').TrainConfig} deps.config
   * @param {Model} deps.model        the main thread's replica: evaluation, the single-worker noise pass
   * @param {DataParallel} deps.engine the workers; their shared parameters are the truth while training
   * @param {{ train: Split, test: Split }} deps.data
   * @param {(doc: Record<string, unknown>) => void} deps.emit  one JSON line on stdout
   * @param {(pos: Position, reason: string) => string} deps.checkpoint save model.params, returns the path
   */
  constructor(deps) {
    this.config = deps.config;
    this.model = deps.model;
    this.engine = deps.engine;
    this.data = deps.data;
    this.emit = deps.emit;
    this.checkpoint = deps.checkpoint;
    this.stopRequested = false;
  }

  /** Ask the loop to stop at the next step boundary (all workers stop at the same step). */
  requestStop() {
    this.stopRequested = true;
    this.engine.requestStop();
  }

  /**
   * Train from `pos` to the configured epoch count, or until a stop is requested. On return
   * `model.params` holds the trained parameters.
   * @param {Position} pos where to start (a fresh job or a checkpoint)
   * @returns {Promise<{ stopped: boolean, pos: Position }>}
   */
  async run(pos) {
    const { epochs, batchSize, learningRate } = this.config;
    const n = this.data.train.x.length;
    /** @type {Position} */
    let p = { ...pos, partial: { ...emptyPartial(), ...pos.partial } };
    while (p.epoch < epochs) {
      if (this.stopRequested) return { stopped: true, pos: p };
      const r = await this.engine.run({ epoch: p.epoch, offset: p.offset, globalBatch: batchSize, learningRate });
      this.model.params.set(this.engine.params);
      p.partial.lossSum += r.lossSum;
      p.partial.correct += r.correct;
      p.partial.count += r.count;
      p.partial.trainMs += r.ms;
      p.partial.gnsGradSq += r.gnsGradSq;
      p.partial.gnsTrace += r.gnsTrace;
      p.partial.gnsSteps += r.gnsSteps;
      p.samples += r.count;
      p.step += r.steps;
      p.offset = r.offset;
      if (p.offset < n) return { stopped: true, pos: p }; // stopped mid-epoch
      this.report(p);
      p = { ...p, epoch: p.epoch + 1, offset: 0, partial: emptyPartial() };
      if (p.epoch % this.config.checkpointEvery === 0 && p.epoch < epochs && !this.stopRequested) this.checkpoint(p, 'epoch');
    }
    return { stopped: false, pos: p };
  }

  /** End of an epoch: held-out evaluation, gradient noise scale, one progress line. @param {Position} p */
  report(p) {
    const { workers, batchSize, baseBatchSize } = this.config;
    const test = this.model.evaluate(this.data.test.x, this.data.test.y);
    /** @type {{ phi: number | null, method: string, batches: number }} */
    let gns;
    if (workers > 1) {
      const phi = noiseScaleFromSums({ gradSqSum: p.partial.gnsGradSq, traceSum: p.partial.gnsTrace, steps: p.partial.gnsSteps });
      gns = { phi, method: 'data-parallel', batches: p.partial.gnsSteps };
    } else {
      const g = this.noiseScale();
      gns = { phi: g.gnsSimple, method: 'pass', batches: g.bBig / g.bSmall };
    }
    const trainMs = p.partial.trainMs;
    const m0 = baseBatchSize ?? 1;
    const eff = statisticalEfficiency(gns.phi, batchSize, m0);
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
      gradNoiseScale: gns.phi === null ? null : round(gns.phi),
      gnsMethod: gns.method,
      gnsBatches: gns.batches,
      statEfficiency: eff === null ? null : round(eff),
      baseBatch: m0,
      workers,
      globalBatch: batchSize,
      localBatch: localBatchOf(batchSize, workers),
      batchSize,
      learningRate: this.config.learningRate,
      step: p.step,
    });
  }

  /**
   * WORKERS=1: gradients of consecutive minibatches of BATCH_SIZE at the current weights (no
   * update), up to gnsMaxBatches of them, fed to the simple noise-scale estimator.
   */
  noiseScale() {
    const { batchSize, gnsMaxBatches } = this.config;
    const { train } = this.data;
    const P = this.model.params.length;
    const k = Math.min(gnsMaxBatches, Math.floor(train.x.length / batchSize));
    const mean = new Float64Array(P);
    const g = new Float32Array(P);
    let sumSqNorms = 0;
    for (let b = 0; b < k; b++) {
      const xs = train.x.slice(b * batchSize, (b + 1) * batchSize);
      const ys = train.y.slice(b * batchSize, (b + 1) * batchSize);
      this.model.gradient(xs, ys, g);
      let sq = 0;
      for (let i = 0; i < P; i++) {
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

module.exports = { Trainer, splitDataset, emptyPartial, localBatchOf };
