// @ts-check
'use strict';
/**
 * Dynamic batching. Requests queue up; when the model is idle the queue's head becomes a batch of
 * at most `maxBatchSize` instances (after an optional `batchTimeoutMs` wait for it to fill), and
 * requests arriving while a batch runs form the next one. One token-gated ONNX run per batch.
 */
const { performance } = require('node:perf_hooks');
const { LatencyEstimator, round } = require('./stats');

/**
 * @typedef {import('./model').BatchOutputs} BatchOutputs
 * @typedef {{ outputs: BatchOutputs, batchSize: number, latencyMs: number, queueMs: number }} BatchResult
 * @typedef {{ instances: Float32Array[], enqueuedAt: number,
 *   resolve: (r: BatchResult) => void, reject: (e: unknown) => void }} Entry
 */

class Batcher {
  /**
   * @param {object} deps
   * @param {{ run(instances: Float32Array[]): Promise<BatchOutputs> }} deps.model
   * @param {import('./gate').TokenGate} deps.gate
   * @param {import('./stats').Stats} deps.stats
   * @param {number} deps.maxBatchSize
   * @param {number} deps.batchTimeoutMs
   * @param {(size: number, latencyMs: number) => void} [deps.onBatch]
   * @param {(line: string) => void} [deps.log]
   */
  constructor(deps) {
    this.model = deps.model;
    this.gate = deps.gate;
    this.stats = deps.stats;
    this.maxBatchSize = deps.maxBatchSize;
    this.batchTimeoutMs = deps.batchTimeoutMs;
    this.onBatch = deps.onBatch || (() => undefined);
    this.log = deps.log || (() => undefined);
    this.estimator = new LatencyEstimator();
    /** @type {Entry[]} */
    this.queue = [];
    this.queuedInstances = 0;
    this.inFlight = 0;
    this.running = false;
    /** @type {Array<() => void>} */
    this.idleWaiters = [];
    this.gateFailures = 0;
  }

  /**
   * Queue a request's instances. Requests larger than the batch limit are split into chunks of
   * at most `maxBatchSize` and reassembled; the result reports the largest batch used.
   * @param {Float32Array[]} instances
   * @returns {Promise<BatchResult>}
   */
  async submit(instances) {
    if (instances.length <= this.maxBatchSize) return this.enqueue(instances);
    const chunks = [];
    for (let i = 0; i < instances.length; i += this.maxBatchSize) {
      chunks.push(this.enqueue(instances.slice(i, i + this.maxBatchSize)));
    }
    const parts = await Promise.all(chunks);
    /** @type {BatchOutputs} */
    const outputs = {};
    for (const name of Object.keys(parts[0].outputs)) {
      outputs[name] = { dims: parts[0].outputs[name].dims, rows: parts.flatMap((p) => p.outputs[name].rows) };
    }
    return {
      outputs,
      batchSize: Math.max(...parts.map((p) => p.batchSize)),
      latencyMs: Math.max(...parts.map((p) => p.latencyMs)),
      queueMs: Math.max(...parts.map((p) => p.queueMs)),
    };
  }

  /** @param {Float32Array[]} instances @returns {Promise<BatchResult>} */
  enqueue(instances) {
    return new Promise((resolve, reject) => {
      this.queue.push({ instances, enqueuedAt: performance.now(), resolve, reject });
      this.queuedInstances += instances.length;
      this.kick();
    });
  }

  /** Instances waiting for a batch. */
  get queueLength() {
    return this.queuedInstances;
  }

  /** Resolves once the queue is empty and no batch is running. */
  idle() {
    if (!this.running && this.queue.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(() => resolve(undefined)));
  }

  kick() {
    if (this.running || this.queue.length === 0) return;
    this.running = true;
    // Let requests that arrived in the same turn of the event loop join the first batch.
    setImmediate(() => {
      this.loop().catch((err) => this.log(`batcher loop failed: ${err && err.stack ? err.stack : err}`));
    });
  }

  async loop() {
    try {
      while (this.queue.length > 0) {
        if (this.batchTimeoutMs > 0 && this.queuedInstances < this.maxBatchSize) {
          await new Promise((r) => setTimeout(r, this.batchTimeoutMs));
        }
        await this.runBatch(this.take());
      }
    } finally {
      this.running = false;
      if (this.queue.length > 0) this.kick();
      else for (const w of this.idleWaiters.splice(0)) w();
    }
  }

  /** @returns {Entry[]} whole requests from the head of the queue, at most maxBatchSize instances */
  take() {
    /** @type {Entry[]} */
    const batch = [];
    let size = 0;
    while (this.queue.length > 0) {
      const next = this.queue[0];
      if (batch.length > 0 && size + next.instances.length > this.maxBatchSize) break;
      this.queue.shift();
      batch.push(next);
      size += next.instances.length;
    }
    this.queuedInstances -= size;
    return batch;
  }

  /** @param {Entry[]} batch */
  async runBatch(batch) {
    const instances = batch.flatMap((e) => e.instances);
    const size = instances.length;
    this.inFlight = size;
    const estimatedMs = this.estimator.estimate(size);
    let acquired = false;
    try {
      await this.gate.acquire(estimatedMs);
      acquired = true;
    } catch (err) {
      // Fail open: a missing token daemon must not take the function down.
      this.gateFailures += 1;
      if (this.gateFailures === 1 || this.gateFailures % 100 === 0) {
        this.log(`token gate acquire failed (${this.gateFailures} so far), running ungated: ${err}`);
      }
    }
    const started = performance.now();
    /** @type {BatchOutputs | undefined} */
    let outputs;
    /** @type {unknown} */
    let failure;
    try {
      outputs = await this.model.run(instances);
    } catch (err) {
      failure = err;
    }
    const latencyMs = performance.now() - started;
    if (acquired) {
      try {
        this.gate.release(latencyMs);
      } catch (err) {
        this.log(`token gate release failed: ${err}`);
      }
    }
    this.inFlight = 0;
    if (!outputs) {
      for (const e of batch) e.reject(failure);
      return;
    }
    this.estimator.observe(size, latencyMs);
    this.stats.recordBatch(size, latencyMs);
    this.onBatch(size, latencyMs);
    let offset = 0;
    for (const e of batch) {
      const n = e.instances.length;
      /** @type {BatchOutputs} */
      const mine = {};
      for (const [name, out] of Object.entries(outputs)) mine[name] = { dims: out.dims, rows: out.rows.slice(offset, offset + n) };
      offset += n;
      e.resolve({ outputs: mine, batchSize: size, latencyMs: round(latencyMs), queueMs: round(started - e.enqueuedAt) });
    }
  }
}

module.exports = { Batcher };
