// @ts-check
'use strict';
/**
 * The ONNX session in a worker thread, so a running batch never blocks the runtime's event loop
 * (health checks, request parsing, batching go on while the model runs). Messages:
 * `{id, feeds: {name: {type, data, dims}}}` → `{id, out: {name: {type, dims, data}}}` or `{id, error}`.
 * Data of any onnxruntime type crosses as the structured clone carries it (BigInt64Array,
 * Uint16Array for float16, string[] ...); outputs are copied into arrays this thread owns and transferred.
 */
const { parentPort, workerData } = require('node:worker_threads');
const ort = require('onnxruntime-node');

if (!parentPort) throw new Error('model-worker.js runs as a worker thread');
const port = parentPort;

/** @param {readonly any[]} meta */
const plainMeta = (meta) => meta.map((m) => ({
  name: m.name,
  isTensor: m.isTensor,
  type: m.isTensor ? m.type : undefined,
  shape: m.isTensor ? [...m.shape] : undefined,
}));

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
    inputMetadata: plainMeta(session.inputMetadata),
    outputMetadata: plainMeta(session.outputMetadata),
  });
  port.on('message', async (/** @type {{ id: number, feeds: Record<string, { type: any, data: any, dims: number[] }> }} */ m) => {
    try {
      /** @type {Record<string, ort.Tensor>} */
      const feeds = {};
      for (const [name, f] of Object.entries(m.feeds)) feeds[name] = new ort.Tensor(f.type, f.data, f.dims);
      const results = await session.run(feeds);
      /** @type {Record<string, { type: string, dims: number[], data: unknown }>} */
      const out = {};
      /** @type {ArrayBuffer[]} */
      const transfer = [];
      for (const name of session.outputNames) {
        const t = results[name];
        if (!t) continue;
        // a copy the thread owns (onnxruntime's buffers are not transferable)
        const src = /** @type {any} */ (t.data);
        const data = ArrayBuffer.isView(src) ? new (/** @type {any} */ (src.constructor))(src) : Array.from(src);
        if (ArrayBuffer.isView(data)) transfer.push(/** @type {ArrayBuffer} */ (data.buffer));
        out[name] = { type: t.type, dims: [...t.dims], data };
      }
      port.postMessage({ id: m.id, out }, transfer);
    } catch (err) {
      port.postMessage({ id: m.id, error: err instanceof Error ? err.message : String(err) });
    }
  });
})();
