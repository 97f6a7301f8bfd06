// @ts-check
'use strict';
/**
 * The ONNX session in a worker thread, so a running batch never blocks the runtime's event loop
 * (health checks, request parsing, batching go on while the model runs). Messages: `{id, input,
 * data, shape}` → `{id, out: {name: {dims, data}}}` or `{id, error}`; buffers are transferred.
 */
const { parentPort, workerData } = require('node:worker_threads');
const ort = require('onnxruntime-node');

if (!parentPort) throw new Error('model-worker.js runs as a worker thread');
const port = parentPort;

(async () => {
  /** @type {ort.InferenceSession} */
  let session;
  try {
    session = await ort.InferenceSession.create(workerData.modelPath, workerData.sessionOptions);
  } catch (err) {
    port.postMessage({ type: 'error', message: err instanceof Error ? err.message : String(err) });
    return;
  }
  port.postMessage({
    type: 'ready',
    inputNames: [...session.inputNames],
    outputNames: [...session.outputNames],
    inputMetadata: session.inputMetadata.map((m) => ({
      name: m.name,
      isTensor: m.isTensor,
      type: m.isTensor ? m.type : undefined,
      shape: m.isTensor ? [...m.shape] : undefined,
    })),
  });
  port.on('message', async (/** @type {{ id: number, input: string, data: Float32Array, shape: number[] }} */ m) => {
    try {
      const results = await session.run({ [m.input]: new ort.Tensor('float32', m.data, m.shape) });
      /** @type {Record<string, { dims: number[], data: unknown }>} */
      const out = {};
      /** @type {ArrayBuffer[]} */
      const transfer = [];
      for (const name of session.outputNames) {
        const t = results[name];
        // a copy the thread owns (onnxruntime's buffers are not transferable)
        const data = t && t.data instanceof Float32Array ? new Float32Array(t.data) : t?.data;
        if (data instanceof Float32Array) transfer.push(/** @type {ArrayBuffer} */ (data.buffer));
        out[name] = { dims: t ? [...t.dims] : [], data };
      }
      port.postMessage({ id: m.id, out }, transfer);
    } catch (err) {
      port.postMessage({ id: m.id, error: err instanceof Error ? err.message : String(err) });
    }
  });
})();
