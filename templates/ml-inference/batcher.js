// @ts-check
'use strict';
/**
 * Dynamic batching (contract.md, issue 25). Requests queue up; when the model is idle the queue's
 * head becomes a run, joined by queued requests with the same dims past axis 0 (same key) up to
 * `maxBatchSize` rows of axis 0, after an optional `batchTimeoutMs` wait for it to fill. Requests
 * are concatenated only where the model is batchable; otherwise each runs alone (split into
 * `fixedBatch`-row runs where the model fixes axis 0). One token-gated ONNX run per batch.
 */
const { performance } = require('node:perf_hooks');
const { LatencyEstimator, round } = require('./stats');
const { badInput, abortReason } = require('./errors');
const T = require('./tensors');
const { v1Rows } = require('./instances');

/**
 * @typedef {import('./dtypes').Tensor} Tensor
 * @typedef {{ outputs: Record<string, Tensor>, batchSize: number, batchLatencyMs: number, latencyMs: number, queueMs: number }} InferResult
 * @typedef {{ inputs: Record<string, Tensor>, rows: number, key: string | null, enqueuedAt: number,
 *   resolve: (r: InferResult) => void, reject: (e: unknown) => void, detach: (() => void) | null }} Entry
 * @typedef {import('./instances').BatchOutputs} BatchOutputs
 */

/** Queued entries scanned for ones that may join the head's run. */
const SCAN_LIMIT = 256;

class Batcher {
  /**
   * @param {object} deps
   * @param {{ info: import('./model-info').ModelInfo, run(inputs: Record<string, Tensor>): Promise<Record<string, Tensor>> }} deps.model
   * @param {import('./gate').TokenGate} deps.gate
   * @param {import('./stats').Stats} deps.stats
   * @param {number} deps.maxBatchSize most rows of axis 0 in one run
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
    /** requests (parts) taken out of the queue because their signal aborted */
    this.aborted = 0;
  }

  /**
   * Validate a request's tensors against the model, run them (batched with others where the model
   * allows), and answer every output (or those named in `opts.outputs`). When `opts.signal` aborts
   * while the request is still queued, it leaves the queue and rejects with the signal's reason
   * (its rows never run); once its run has begun, the abort is ignored.
   * @param {Record<string, Tensor>} inputs
   * @param {{ outputs?: string[], signal?: AbortSignal }} [opts]
   * @returns {Promise<InferResult>}
   */
  async infer(inputs, opts = {}) {
    const { info } = this.model;
    const { signal } = opts;
    if (signal && signal.aborted) throw abortReason(signal);
    const wanted = opts.outputs;
    if (wanted !== undefined) {
      const names = info.outputs.map((o) => o.name);
      if (!Array.isArray(wanted)) throw badInput('outputs: want an array of output names');
      for (const w of wanted) if (!names.includes(w)) throw badInput(`output '${w}': the model has no such output (outputs: ${names.join(', ')})`);
    }
    const valid = T.validateInputs(info, inputs);
    const tensors = Object.values(valid);
    const axis0 = tensors.length > 0 && tensors[0].shape.length > 0 ? tensors[0].shape[0] : 0;
    /** @type {Array<Promise<InferResult>>} */
    const parts = [];
    if (info.batchable) {
      if (axis0 === 0) throw badInput(`input '${info.inputs[0].name}': axis 0 (the batch) is 0; send at least one row`);
      const key = T.batchKey(valid);
      for (let i = 0; i < axis0; i += this.maxBatchSize) {
        const to = Math.min(axis0, i + this.maxBatchSize);
        parts.push(this.enqueue(axis0 <= this.maxBatchSize ? valid : T.sliceAll(valid, i, to), to - i, key, signal));
      }
    } else if (info.fixedBatch > 0) {
      const f = info.fixedBatch;
      for (const [name, t] of Object.entries(valid)) {
        if (t.shape[0] !== axis0) throw badInput(`input '${name}': axis 0 is ${t.shape[0]}, but input '${info.inputs[0].name}' has ${axis0} there`);
      }
      for (let i = 0; i < axis0; i += f) parts.push(this.enqueue(axis0 === f ? valid : T.sliceAll(valid, i, i + f), f, null, signal));
    } else {
      parts.push(this.enqueue(valid, 1, null, signal));
    }
    if (parts.length === 1 && !wanted) return parts[0];
    const results = parts.length === 1 ? [await parts[0]] : await Promise.all(parts);
    /** @type {Record<string, Tensor>} */
    const outputs = {};
    for (const name of wanted || Object.keys(results[0].outputs)) {
      outputs[name] = results.length === 1 ? results[0].outputs[name] : T.concatRows(results.map((r) => r.outputs[name]));
    }
    const most = (/** @type {(r: InferResult) => number} */ f) => Math.max(...results.map(f));
    const batchLatencyMs = most((r) => r.batchLatencyMs);
    return { outputs, batchSize: most((r) => r.batchSize), batchLatencyMs, latencyMs: batchLatencyMs, queueMs: most((r) => r.queueMs) };
  }

  /**
   * v1 path: instances from `model.toInstance` (Float32Arrays of a single-input float32 model, or
   * per-instance tensors with a batch axis of 1) → per output, one row per instance.
   * @param {Array<Float32Array | Record<string, Tensor>>} instances
   * @param {{ signal?: AbortSignal }} [opts] as for infer: an abort while queued drops the request
   * @returns {Promise<{ outputs: BatchOutputs, batchSize: number, latencyMs: number, queueMs: number }>}
   */
  async submit(instances, opts = {}) {
    const { signal } = opts;
    const { info } = this.model;
    /** @type {InferResult[]} */
    let results;
    let perInstance = true;
    if (instances.every((x) => x instanceof Float32Array)) {
      if (!info.legacy) throw badInput(`the model takes named tensors (inputs: ${info.inputs.map((s) => s.name).join(', ')}), not float32 instances`);
      const n = instances.length;
      // one instance goes as it is (a batch of several concatenates it anyway)
      const data = n === 1 ? /** @type {Float32Array} */ (instances[0]) : T.own(new Float32Array(n * info.instanceSize));
      if (n > 1) instances.forEach((x, i) => data.set(/** @type {Float32Array} */ (x), i * info.instanceSize));
      const inputs = { [info.inputName]: { datatype: /** @type {const} */ ('FP32'), shape: [n, ...info.instanceDims], data } };
      // model.toInstance checked every value and length of these: queued as they are where one run takes them all
      const direct = info.batchable && n <= this.maxBatchSize;
      if (direct && signal && signal.aborted) throw abortReason(signal);
      results = [await (direct ? this.enqueue(inputs, n, T.batchKey(inputs), signal) : this.infer(inputs, { signal }))];
    } else {
      perInstance = info.batchable || info.fixedBatch === 1;
      results = await Promise.all(instances.map((x) => this.infer(/** @type {Record<string, Tensor>} */ (x), { signal })));
    }
    return {
      outputs: v1Rows(results.map((r) => r.outputs), perInstance),
      batchSize: Math.max(...results.map((r) => r.batchSize)),
      latencyMs: Math.max(...results.map((r) => r.batchLatencyMs)),
      queueMs: Math.max(...results.map((r) => r.queueMs)),
    };
  }

  /**
   * @param {Record<string, Tensor>} inputs @param {number} rows axis-0 rows (1 for a model without a batch axis)
   * @param {string | null} key requests with the same key may share a run; null runs alone
   * @param {AbortSignal} [signal] aborting it while the entry is queued takes it out and rejects it
   * @returns {Promise<InferResult>}
   */
  enqueue(inputs, rows, key, signal) {
    return new Promise((resolve, reject) => {
      /** @type {Entry} */
      const entry = { inputs, rows, key, enqueuedAt: performance.now(), resolve, reject, detach: null };
      if (signal) {
        const onAbort = () => this.drop(entry, abortReason(signal));
        signal.addEventListener('abort', onAbort, { once: true });
        entry.detach = () => signal.removeEventListener('abort', onAbort);
      }
      this.queue.push(entry);
      this.queuedInstances += rows;
      this.kick();
    });
  }

  /** An aborted entry leaves the queue (if still there: a running one is left to finish). @param {Entry} entry @param {unknown} reason */
  drop(entry, reason) {
    const i = this.queue.indexOf(entry);
    if (i < 0) return;
    this.queue.splice(i, 1);
    this.queuedInstances -= entry.rows;
    this.aborted += 1;
    entry.reject(reason);
    if (this.queue.length === 0 && !this.running) for (const w of this.idleWaiters.splice(0)) w();
  }

  /** Rows (instances) waiting for a batch. */
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
        if (this.batchTimeoutMs > 0 && this.queue[0].key !== null && this.queuedInstances < this.maxBatchSize) {
          await new Promise((r) => setTimeout(r, this.batchTimeoutMs));
          if (this.queue.length === 0) break; // all aborted while waiting
        }
        await this.runBatch(this.take());
      }
    } finally {
      this.running = false;
      if (this.queue.length > 0) this.kick();
      else for (const w of this.idleWaiters.splice(0)) w();
    }
  }

  /** @returns {Entry[]} the head, and queued entries with its key, at most maxBatchSize rows */
  take() {
    const head = /** @type {Entry} */ (this.queue.shift());
    const batch = [head];
    let size = head.rows;
    if (head.key !== null) {
      for (let i = 0; i < this.queue.length && i < SCAN_LIMIT && size < this.maxBatchSize; ) {
        const e = this.queue[i];
        if (e.key === head.key && size + e.rows <= this.maxBatchSize) {
          batch.push(e);
          size += e.rows;
          this.queue.splice(i, 1);
        } else {
          i += 1;
        }
      }
    }
    this.queuedInstances -= size;
    for (const e of batch) if (e.detach) e.detach();
    return batch;
  }

  /** @param {Entry[]} batch */
  async runBatch(batch) {
    const size = batch.reduce((a, e) => a + e.rows, 0);
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
    /** @type {Record<string, Tensor> | undefined} */
    let outputs;
    /** @type {unknown} */
    let failure;
    try {
      outputs = await this.model.run(T.concatAll(batch.map((e) => e.inputs)));
      if (batch.length > 1) T.checkBatchAxis(outputs, size);
    } catch (err) {
      failure = err;
      outputs = undefined;
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
      // One request's values (an index past a table, say) must not fail the others: run each alone.
      if (batch.length > 1) {
        for (const e of batch) await this.runBatch([e]);
        return;
      }
      batch[0].reject(failure);
      return;
    }
    this.estimator.observe(size, latencyMs);
    this.stats.recordBatch(size, latencyMs);
    this.onBatch(size, latencyMs);
    let offset = 0;
    for (const e of batch) {
      const mine = batch.length === 1 ? outputs : T.sliceAll(outputs, offset, offset + e.rows);
      offset += e.rows;
      e.resolve({ outputs: mine, batchSize: size, batchLatencyMs: round(latencyMs), latencyMs: round(latencyMs), queueMs: round(started - e.enqueuedAt) });
    }
  }
}

module.exports = { Batcher };
