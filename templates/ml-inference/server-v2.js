// @ts-check
'use strict';
/**
 * The Open Inference Protocol's endpoints (KServe v2 REST) on the runtime: health, server and model
 * metadata, model ready, infer. The runtime serves one model: any `{name}` in the path is this
 * function's model; its name is `MLFAAS_FUNCTION_NAME` (else the path's), its one version
 * `MLFAAS_MODEL_VERSION` (default '1'); another version is 404. Errors are `{"error": "..."}`.
 */
const { RuntimeError, notReady } = require('./errors');
const v2 = require('./v2');
const { readBody, decodeBody, send, sendJson } = require('./http-io');
const { version: serverVersion } = require('./package.json');

/** Extensions named as Triton names them. */
const EXTENSIONS = ['binary_tensor_data'];

/**
 * @param {import('./server').ServerDeps} deps
 * @param {import('./v2').V2Route} r
 * @param {import('node:http').IncomingMessage} req
 * @param {import('node:http').ServerResponse} res
 * @param {AbortSignal} [signal] aborted when exec_timeout passes
 */
async function serveV2(deps, r, req, res, signal) {
  const wt = deps.writeTimeoutMs;
  const method = req.method || 'GET';
  const wantMethod = r.kind === 'infer' ? 'POST' : 'GET';
  if (r.kind === 'unknown') throw new RuntimeError('not_found', 404, `${req.url}: not an endpoint of the Open Inference Protocol served here`);
  if (method !== wantMethod && !(wantMethod === 'GET' && method === 'HEAD')) {
    res.setHeader('Allow', wantMethod === 'GET' ? 'GET, HEAD' : 'POST');
    throw new RuntimeError('method_not_allowed', 405, `${method} ${req.url}: use ${wantMethod}`);
  }
  const { state } = deps;
  const ready = state.ready && !state.draining && deps.model() !== null;
  const why = state.draining ? 'the function is shutting down' : 'the model is still loading';
  if (r.kind === 'live') return sendJson(res, 200, { live: true }, wt);
  if (r.kind === 'ready') return sendJson(res, ready ? 200 : 503, ready ? { ready: true } : { ready: false, error: why }, wt);
  if (r.kind === 'server') return sendJson(res, 200, { name: 'mlfaas-ml-inference', version: serverVersion, extensions: EXTENSIONS }, wt);
  const m = /** @type {{ kind: string, name: string, version: string | null }} */ (r);
  const name = deps.functionName || m.name;
  if (m.version !== null && m.version !== deps.modelVersion) {
    throw new RuntimeError('not_found', 404, `model '${name}' has no version '${m.version}' here (versions: ${deps.modelVersion})`);
  }
  if (r.kind === 'modelReady') {
    return sendJson(res, ready ? 200 : 503, ready ? { name, ready: true } : { name, ready: false, error: why }, wt);
  }
  const model = deps.model();
  if (r.kind === 'model') {
    if (!model) throw notReady(why);
    return sendJson(res, 200, v2.modelMetadata(model.info, name, deps.modelVersion), wt);
  }
  // infer
  const raw = await readBody(req, deps.maxBodyBytes);
  const enc = req.headers['content-encoding'];
  const body = decodeBody(raw, Array.isArray(enc) ? enc[0] : enc, deps.maxBodyBytes);
  const batcher = deps.batcher();
  if (state.draining) throw new RuntimeError('shutting_down', 503, why);
  if (!ready || !model || !batcher) throw notReady(`${why}; retry after GET /v2/health/ready answers 200`);
  const request = v2.parseInferRequest(body, req.headers);
  deps.stats.requests += 1;
  /** @type {{ outputs?: string[], signal?: AbortSignal }} */
  const opts = request.outputs ? { outputs: request.outputs.map((o) => o.name) } : {};
  if (signal) opts.signal = signal;
  const result = await batcher.infer(request.inputs, opts);
  const answer = v2.encodeInferResponse({
    modelName: name, modelVersion: deps.modelVersion, id: request.id, outputs: result.outputs, requested: request.outputs, binaryOutput: request.binaryOutput,
  });
  send(res, 200, {
    ...answer.headers,
    'X-Batch-Size': String(result.batchSize),
    'X-Batch-Latency-Ms': String(result.batchLatencyMs),
    'X-Queue-Ms': String(result.queueMs),
  }, answer.body, wt);
}

module.exports = { serveV2 };
