// @ts-check
'use strict';
/**
 * The ONNX model: loading, the input's shape from the model metadata, and one run per batch.
 * Only single-input float32 models are served; the first dimension is the batch dimension.
 */
const path = require('node:path');
const { Worker } = require('node:worker_threads');
const ort = require('onnxruntime-node');
const { badInput, modelError } = require('./errors');

/**
 * A session in a worker thread (see model-worker.js): same `run` contract as an
 * `ort.InferenceSession`, but the event loop stays free while it runs.
 */
class WorkerSession {
  /** @param {Worker} worker @param {any} meta */
  constructor(worker, meta) {
    this.worker = worker;
    this.inputNames = meta.inputNames;
    this.outputNames = meta.outputNames;
    this.inputMetadata = meta.inputMetadata;
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
      for (const p of this.pending.values()) p.reject(e);
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
   * @param {string} input
   * @param {Float32Array} data
   * @param {number[]} shape
   * @returns {Promise<Record<string, { dims: number[], data: unknown }>>}
   */
  run(input, data, shape) {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ id, input, data, shape }, [/** @type {ArrayBuffer} */ (data.buffer)]);
    });
  }
}

/**
 * @typedef {object} ModelInfo
 * @property {string} inputName
 * @property {number[]} instanceDims   input shape without the batch dimension
 * @property {number} instanceSize     product of instanceDims
 * @property {boolean} dynamicBatch    false when the model fixes its batch dimension
 * @property {number} fixedBatch       the fixed batch size when dynamicBatch is false
 * @property {string[]} outputNames
 */

/** Per-output rows, one Float32Array per instance, and each row's dims. */
/** @typedef {Record<string, { dims: number[], rows: Float32Array[] }>} BatchOutputs */

class Model {
  /** @param {ort.InferenceSession | WorkerSession} session @param {ModelInfo} info */
  constructor(session, info) {
    this.session = session;
    this.info = info;
  }

  /**
   * @param {string} modelPath
   * @param {{ intraOpThreads: number, allowSpinning?: boolean }} opts
   */
  static async load(modelPath, opts) {
    const spin = opts.allowSpinning ? '1' : '0';
    /** @type {ort.InferenceSession.SessionOptions} */
    const so = { graphOptimizationLevel: 'all', extra: { session: { intra_op: { allow_spinning: spin }, inter_op: { allow_spinning: spin } } } };
    if (opts.intraOpThreads > 0) so.intraOpNumThreads = opts.intraOpThreads;
    // ORT_IN_WORKER=0 runs the session on the main thread (it then blocks the loop per batch)
    const session = process.env.ORT_IN_WORKER === '0' ? await ort.InferenceSession.create(modelPath, so) : await WorkerSession.create(modelPath, so);
    return new Model(session, describe(/** @type {any} */ (session), modelPath));
  }

  /**
   * Validate one instance against the input shape and flatten it.
   * @param {unknown} instance a flat array of instanceSize numbers, a nested array of exactly
   *   instanceDims, or a Float32Array of instanceSize values
   * @param {number} index position in the request, for the error message
   * @returns {Float32Array}
   */
  toInstance(instance, index) {
    const { instanceSize, instanceDims, inputName } = this.info;
    const want = `the model input '${inputName}' takes ${instanceSize} numbers (shape [${instanceDims.join(', ')}])`;
    if (instance instanceof Float32Array) {
      if (instance.length !== instanceSize) throw badInput(`instance ${index} has ${instance.length} values; ${want}`);
      return instance;
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

  /**
   * One ONNX run over a batch of validated instances.
   * @param {Float32Array[]} instances
   * @returns {Promise<BatchOutputs>}
   */
  async run(instances) {
    const { inputName, instanceSize, instanceDims } = this.info;
    const n = instances.length;
    const data = new Float32Array(n * instanceSize);
    for (let i = 0; i < n; i++) data.set(instances[i], i * instanceSize);
    /** @type {Record<string, { dims: readonly number[], data: unknown }>} */
    let results;
    try {
      results =
        this.session instanceof WorkerSession
          ? await this.session.run(inputName, data, [n, ...instanceDims])
          : await this.session.run({ [inputName]: new ort.Tensor('float32', data, [n, ...instanceDims]) });
    } catch (err) {
      throw modelError(`onnxruntime failed on a batch of ${n}: ${err instanceof Error ? err.message : String(err)}`);
    }
    /** @type {BatchOutputs} */
    const outputs = {};
    for (const name of this.info.outputNames) {
      const t = results[name];
      if (!t || !(t.data instanceof Float32Array) || t.dims[0] !== n) {
        throw modelError(`output '${name}' is not a float32 tensor with batch dimension ${n}`);
      }
      const dims = t.dims.slice(1);
      const size = dims.reduce((a, b) => a * b, 1);
      const rows = [];
      for (let i = 0; i < n; i++) rows.push(t.data.subarray(i * size, (i + 1) * size));
      outputs[name] = { dims, rows };
    }
    return outputs;
  }
}

/**
 * @param {{ inputNames: readonly string[], outputNames: readonly string[], inputMetadata: readonly any[] }} session
 * @param {string} modelPath
 * @returns {ModelInfo}
 */
function describe(session, modelPath) {
  if (session.inputNames.length !== 1) {
    throw new Error(`${modelPath}: the runtime serves single-input models; this one has inputs ${session.inputNames.join(', ')}`);
  }
  const meta = session.inputMetadata[0];
  if (!meta || !meta.isTensor) throw new Error(`${modelPath}: input '${session.inputNames[0]}' is not a tensor`);
  if (meta.type !== 'float32') throw new Error(`${modelPath}: input '${meta.name}' is ${meta.type}; the runtime feeds float32`);
  const [batchDim, ...rest] = meta.shape;
  if (batchDim === undefined) throw new Error(`${modelPath}: input '${meta.name}' is a scalar; want [batch, ...]`);
  const instanceDims = rest.map((d, i) => {
    if (typeof d !== 'number' || d <= 0) {
      throw new Error(`${modelPath}: input '${meta.name}' dimension ${i + 1} is '${d}'; only the batch dimension may be dynamic`);
    }
    return d;
  });
  const dynamicBatch = typeof batchDim !== 'number' || batchDim <= 0;
  return {
    inputName: meta.name,
    instanceDims,
    instanceSize: instanceDims.reduce((a, b) => a * b, 1),
    dynamicBatch,
    fixedBatch: dynamicBatch ? 0 : Number(batchDim),
    outputNames: [...session.outputNames],
  };
}

module.exports = { Model };
