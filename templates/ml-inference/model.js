// @ts-check
'use strict';
/**
 * The ONNX model: loading, its inputs and outputs from the model metadata (contract.md, issue 25),
 * and one ONNX Runtime run over named tensors of any datatype. No batching here (batcher.js).
 */
const path = require('node:path');
const { Worker } = require('node:worker_threads');
const ort = require('onnxruntime-node');
const { badInput, modelError, modelRejected } = require('./errors');
const dtypes = require('./dtypes');
const { describeModel } = require('./model-info');
const { own, transferList } = require('./tensors');

/** @typedef {import('./dtypes').Tensor} Tensor */
/** @typedef {{ type: string, data: any, dims: number[] }} Feed  onnxruntime's view of a tensor, cloneable to a worker */
/** @typedef {import('./model-info').ModelInfo} ModelInfo */

/**
 * A session in a worker thread (see model-worker.js): `run(feeds)` like an `ort.InferenceSession`,
 * but the event loop stays free while it runs.
 */
class WorkerSession {
  /** @param {Worker} worker @param {any} meta */
  constructor(worker, meta) {
    this.worker = worker;
    this.inputNames = meta.inputNames;
    this.outputNames = meta.outputNames;
    this.inputMetadata = meta.inputMetadata;
    this.outputMetadata = meta.outputMetadata;
    this.nextId = 1;
    /** @type {Map<number, { resolve: (v: any) => void, reject: (e: Error) => void }>} */
    this.pending = new Map();
    worker.on('message', (m) => {
      const p = this.pending.get(m.id);
      if (!p) return;
      this.pending.delete(m.id);
      if (m.error) p.reject(new Error(m.error));
      else p.resolve(m.out);
    });
    const failAll = (/** @type {Error} */ e) => {
      const gone = Object.assign(new Error(e.message), { workerGone: true });
      for (const p of this.pending.values()) p.reject(gone);
      this.pending.clear();
    };
    worker.on('error', failAll);
    worker.on('exit', (code) => failAll(new Error(`model worker exited (${code})`)));
    worker.unref();
  }

  /**
   * @param {string} modelPath
   * @param {ort.InferenceSession.SessionOptions} sessionOptions
   * @returns {Promise<WorkerSession>}
   */
  static create(modelPath, sessionOptions) {
    return new Promise((resolve, reject) => {
      const worker = new Worker(path.join(__dirname, 'model-worker.js'), { workerData: { modelPath, sessionOptions } });
      worker.once('message', (m) => (m.type === 'ready' ? resolve(new WorkerSession(worker, m)) : reject(new Error(m.message))));
      worker.once('error', reject);
    });
  }

  /**
   * Inputs are copied to the worker but for the buffers in `transfer`; outputs come back transferred.
   * @param {Record<string, Feed>} feeds
   * @param {ArrayBuffer[]} [transfer]
   * @returns {Promise<Record<string, Feed>>}
   */
  run(feeds, transfer = []) {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ id, feeds }, transfer);
    });
  }

  close() {
    return this.worker.terminate();
  }
}

class Model {
  /** @param {ort.InferenceSession | WorkerSession} session @param {ModelInfo} info */
  constructor(session, info) {
    this.session = session;
    this.info = info;
  }

  /**
   * @param {string} modelPath absolute, or relative to the working directory (config.js resolves
   *   MODEL_PATH against function/, so an absolute path from the node's model cache stays as it is)
   * @param {{ intraOpThreads: number, allowSpinning?: boolean }} opts
   */
  static async load(modelPath, opts) {
    const spin = opts.allowSpinning ? '1' : '0';
    /** @type {ort.InferenceSession.SessionOptions} */
    const so = { graphOptimizationLevel: 'all', extra: { session: { intra_op: { allow_spinning: spin }, inter_op: { allow_spinning: spin } } } };
    if (opts.intraOpThreads > 0) so.intraOpNumThreads = opts.intraOpThreads;
    const file = path.resolve(modelPath);
    // ORT_IN_WORKER=0 runs the session on the main thread (it then blocks the loop per batch)
    const session = process.env.ORT_IN_WORKER === '0' ? await ort.InferenceSession.create(file, so) : await WorkerSession.create(file, so);
    try {
      return new Model(session, describeModel(/** @type {any} */ (session), file));
    } catch (err) {
      if (session instanceof WorkerSession) await session.close();
      throw err;
    }
  }

  /**
   * One ONNX Runtime run. The tensors are taken as given (the batcher validates them against
   * `info`); every output of the model comes back.
   * An array of Float32Arrays (v1 instances of a legacy model) is run as one [n, ...instanceDims] batch.
   * @param {Record<string, Tensor> | Float32Array[]} inputs
   * @returns {Promise<Record<string, Tensor>>}
   */
  async run(inputs) {
    if (Array.isArray(inputs)) return this.run(this.stack(inputs));
    /** @type {Record<string, Feed>} */
    const feeds = {};
    for (const { name } of this.info.inputs) {
      const t = inputs[name];
      if (!t) throw badInput(`input '${name}' is missing`);
      feeds[name] = { type: dtypes.toOrt(t.datatype), data: toOrtData(t), dims: t.shape };
    }
    /** @type {Record<string, any>} */
    let results;
    try {
      if (this.session instanceof WorkerSession) {
        // the runtime's own arrays (tensors.js own) move to the worker; the caller's are copied
        results = await this.session.run(feeds, transferList(Object.values(inputs)));
      } else {
        /** @type {Record<string, ort.Tensor>} */
        const ortFeeds = {};
        for (const [k, f] of Object.entries(feeds)) ortFeeds[k] = new ort.Tensor(/** @type {any} */ (f.type), f.data, f.dims);
        results = await this.session.run(ortFeeds);
      }
    } catch (err) {
      const shapes = Object.entries(feeds).map(([k, f]) => `${k}[${f.dims.join(',')}]`).join(' ');
      const message = `onnxruntime failed on ${shapes}: ${err instanceof Error ? err.message : String(err)}`;
      // the session itself is gone: the runtime's fault; else the run refused these (validated) tensors
      throw /** @type {any} */ (err).workerGone ? modelError(message) : modelRejected(message);
    }
    /** @type {Record<string, Tensor>} */
    const out = {};
    for (const { name } of this.info.outputs) {
      const t = results[name];
      const datatype = t && dtypes.fromOrt(t.type);
      if (!t || !datatype) throw modelError(`output '${name}' is missing or of a type the runtime cannot return (${t && t.type})`);
      const data = t.data instanceof Array ? [...t.data] : t.data;
      out[name] = { datatype, shape: [...t.dims].map(Number), data };
    }
    return out;
  }

  /**
   * All-zero inputs of `rows` rows (axis 0) where the model is batchable, else of its fixed batch
   * (dynamic dims other than the batch axis are 1): the warm-up and the capability profile.
   * @param {number} [rows]
   * @returns {Record<string, Tensor>}
   */
  zeroInputs(rows = 1) {
    /** @type {Record<string, Tensor>} */
    const inputs = {};
    for (const spec of this.info.inputs) {
      const shape = spec.shape.map((d, i) => (i === 0 && this.info.batchable ? rows : d < 0 ? 1 : d));
      inputs[spec.name] = { datatype: spec.datatype, shape, data: dtypes.arrayFor(spec.datatype, dtypes.elementCount(shape)) };
    }
    return inputs;
  }

  /**
   * v1 instances of a legacy model (one float32 input) as one [n, ...instanceDims] tensor.
   * @param {Float32Array[]} instances
   * @returns {Record<string, Tensor>}
   */
  stack(instances) {
    const { instanceSize, instanceDims, inputName, legacy } = this.info;
    if (!legacy) throw badInput(`the model takes named tensors (inputs: ${this.info.inputs.map((s) => s.name).join(', ')}), not float32 instances`);
    const data = own(new Float32Array(instances.length * instanceSize));
    instances.forEach((x, i) => data.set(x, i * instanceSize));
    return { [inputName]: { datatype: 'FP32', shape: [instances.length, ...instanceDims], data } };
  }

  /** One run of zero inputs, outside the stats and the gate. */
  async warmup() {
    await this.run(this.zeroInputs(1));
  }

  /**
   * v1 (`{"instances": [...]}`): one instance to what the batcher takes. A Float32Array for a
   * single-input float32 model whose non-batch dims are fixed (as before issue 25); otherwise the
   * instance's tensors with a batch axis of 1 (see model-info.js toInstanceTensors).
   * @param {unknown} instance
   * @param {number} index position in the request, for the error message
   * @returns {Float32Array | Record<string, Tensor>}
   */
  toInstance(instance, index) {
    if (this.info.legacy) return legacyInstance(this.info, instance, index);
    return require('./instances').toInstanceTensors(this.info, instance, index);
  }
}

/** @param {Tensor} t */
function toOrtData(t) {
  if (t.datatype === 'BYTES') return Array.from(/** @type {Array<string|Buffer>} */ (t.data), (s) => (typeof s === 'string' ? s : s.toString('utf8')));
  return t.data;
}

/**
 * @param {ModelInfo} info @param {unknown} instance @param {number} index
 * @returns {Float32Array}
 */
function legacyInstance(info, instance, index) {
  const { instanceSize, instanceDims, inputName } = info;
  const want = `the model input '${inputName}' takes ${instanceSize} numbers (shape [${instanceDims.join(', ')}])`;
  if (instance instanceof Float32Array) {
    if (instance.length !== instanceSize) throw badInput(`instance ${index} has ${instance.length} values; ${want}`);
    return instance;
  }
  if (instance && typeof instance === 'object' && !Array.isArray(instance) && inputName in instance) {
    return legacyInstance(info, /** @type {any} */ (instance)[inputName], index);
  }
  if (!Array.isArray(instance)) throw badInput(`instance ${index} is not an array; ${want}`);
  const out = new Float32Array(instanceSize);
  const nested = instance.length > 0 && Array.isArray(instance[0]);
  if (!nested) {
    if (instance.length !== instanceSize) throw badInput(`instance ${index} has ${instance.length} values; ${want}`);
    for (let i = 0; i < instanceSize; i++) {
      const v = instance[i];
      if (typeof v !== 'number' || !Number.isFinite(v)) throw badInput(`instance ${index}, value ${i} is not a finite number`);
      out[i] = v;
    }
    return out;
  }
  let k = 0;
  /** @param {unknown} a @param {number} depth */
  const walk = (a, depth) => {
    if (!Array.isArray(a) || a.length !== instanceDims[depth]) {
      throw badInput(`instance ${index} is a nested array whose shape is not [${instanceDims.join(', ')}]; ${want}`);
    }
    for (const v of a) {
      if (depth + 1 < instanceDims.length) walk(v, depth + 1);
      else if (typeof v !== 'number' || !Number.isFinite(v)) throw badInput(`instance ${index}, value ${k} is not a finite number`);
      else out[k++] = v;
    }
  };
  walk(instance, 0);
  return out;
}

module.exports = { Model };
