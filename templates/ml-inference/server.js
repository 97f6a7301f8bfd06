// @ts-check
'use strict';
/**
 * The HTTP surface: `GET /_/health`, `GET /_/ready`, `GET /_/stats`, `GET /` (model description),
 * the Open Inference Protocol under `/v2` (server-v2.js) and v1 inference on POST/PUT to any other
 * path (the gateway forwards `/function/<name>/...`). The function's timeouts (of-watchdog's
 * `read_timeout`, `write_timeout`, `exec_timeout`) bound every request here.
 */
const http = require('node:http');
const { performance } = require('node:perf_hooks');
const { RuntimeError, badInput, notReady } = require('./errors');
const { readBody, sendJson: sendJsonTimed } = require('./http-io');
const { matchV2, errorBody } = require('./v2');
const { serveV2 } = require('./server-v2');
const { parseDurationMs } = require('./durations');

/**
 * @typedef {object} ServerDeps
 * @property {{ ready: boolean, draining: boolean }} state
 * @property {() => import('./model').Model | null} model
 * @property {() => import('./batcher').Batcher | null} batcher
 * @property {() => ReturnType<import('./codec').loadCodec> | null} codec
 * @property {import('./stats').Stats} stats
 * @property {number} maxBodyBytes
 * @property {(line: string) => void} log
 * @property {string} functionName   reported on /v2 ('' : the name in the path)
 * @property {string} modelVersion   the one version /v2 serves
 * @property {number | null} readTimeoutMs  whole request received within (408 past it); 0: none; null: Node's defaults
 * @property {number} writeTimeoutMs answer written within (connection closed past it); 0: none
 * @property {number} execTimeoutMs  an inference answered within this of its arrival (504 past it); 0: none
 * @property {{ timeouts: number }} counters shared by the TCP and unix-socket servers
 */

/**
 * @param {ServerDeps} deps
 */
function createServer(deps) {
  let active = 0;
  const rt = deps.readTimeoutMs;
  // Node checks request deadlines every connectionsCheckingInterval (30 s by default): tighter for short read_timeouts
  const opts = rt ? { connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(rt / 4))) } : {};
  const server = http.createServer(opts, (req, res) => {
    active += 1;
    res.on('close', () => { active -= 1; });
    const path = (req.url || '/').split('?')[0];
    const v2 = matchV2(path) !== null;
    const deadline = execDeadline(deps, req, res, path, v2);
    route(deps, req, res, deadline.signal).catch((err) => sendError(res, err, deps, v2)).finally(deadline.stop);
  });
  server.keepAliveTimeout = 5000;
  if (rt !== null) {
    server.requestTimeout = rt;
    if (rt > 0) server.headersTimeout = Math.min(server.headersTimeout, rt);
  }
  return { server, activeRequests: () => active };
}

/**
 * `exec_timeout`: an inference request (v1 POST/PUT, v2 infer) not answered this long after it
 * arrived, queued or running, gets 504 and is counted; its batch, if already running, finishes unseen.
 * @param {ServerDeps} deps @param {http.IncomingMessage} req @param {http.ServerResponse} res
 * @param {string} path @param {boolean} v2
 * @returns {{ stop: () => void, signal: AbortSignal | undefined }} stop clears the deadline; signal aborts when it passes
 *   (handed to batcher.infer: a batcher that honours it drops the request if still queued)
 */
function execDeadline(deps, req, res, path, v2) {
  const inference = v2 ? req.method === 'POST' && path.endsWith('/infer') : !path.startsWith('/_/') && (req.method === 'POST' || req.method === 'PUT');
  if (!(deps.execTimeoutMs > 0) || !inference) return { stop: () => undefined, signal: undefined };
  const ms = requestTimeout(deps.execTimeoutMs, req.headers['x-timeout']);
  const arrived = performance.now();
  const abort = new AbortController();
  const t = setTimeout(() => {
    abort.abort(new RuntimeError('timeout', 504, 'exec_timeout passed'));
    if (res.headersSent) return;
    deps.counters.timeouts += 1;
    const message = `exec_timeout: no answer ${Math.round(performance.now() - arrived)} ms after the request arrived (limit ${ms} ms)`;
    if (!req.complete) res.setHeader('Connection', 'close'); // the rest of the body is not read
    sendJsonTimed(res, 504, v2 ? { error: message } : { error: { code: 'timeout', message } }, deps.writeTimeoutMs);
  }, ms);
  return { stop: () => clearTimeout(t), signal: abort.signal };
}

/**
 * @param {ServerDeps} deps
 * @param {http.IncomingMessage} req
 * @param {http.ServerResponse} res
 * @param {AbortSignal | undefined} signal exec_timeout's
 */
async function route(deps, req, res, signal) {
  const url = (req.url || '/').split('?')[0];
  const { state } = deps;
  if (url === '/_/health') return sendJson(res, 200, { status: 'ok' });
  if (url === '/_/ready') {
    return state.ready && !state.draining
      ? sendJson(res, 200, { status: 'ready' })
      : sendJson(res, 503, { status: state.draining ? 'draining' : 'loading' });
  }
  if (url === '/_/stats') {
    const b = deps.batcher();
    return sendJson(res, 200, {
      ...deps.stats.snapshot({ queueLength: b ? b.queueLength : 0, inFlight: b ? b.inFlight : 0 }),
      timeouts: deps.counters.timeouts,
      ready: state.ready,
      draining: state.draining,
    });
  }
  if (url === '/_/profile' && req.method === 'POST') return profile(deps, req, res);
  const v2 = matchV2(url);
  if (v2) return serveV2(deps, v2, req, res, signal);
  if (req.method === 'GET' || req.method === 'HEAD') {
    const m = deps.model();
    return sendJson(res, 200, {
      ready: state.ready,
      model: m ? { input: m.info.inputName, shape: ['batch', ...m.info.instanceDims], outputs: m.info.outputNames } : null,
      usage: 'POST {"instances": [[...], ...]} or {"data": [...]}; answer {"predictions": [...]}. Open Inference Protocol: GET /v2/models/<name>, POST /v2/models/<name>/infer',
    });
  }
  if (req.method !== 'POST' && req.method !== 'PUT') {
    res.setHeader('Allow', 'GET, POST, PUT');
    throw new RuntimeError('method_not_allowed', 405, `${req.method} is not served; POST a request body`);
  }
  await infer(deps, req, res, signal);
}

/**
 * Every input and output with datatype and shape (-1: dynamic), for `GET /` and the ready line.
 * @param {import('./model-info').ModelInfo} info
 */
function tensorsOf(info) {
  const t = (/** @type {{ name: string, datatype: string, shape: number[] }} */ x) => ({ name: x.name, datatype: x.datatype, shape: x.shape });
  return { inputs: info.inputs.map(t), outputs: info.outputs.map(t) };
}

/**
 * of-watchdog's `X-Timeout` header: a Go duration that shortens exec_timeout for one request (one
 * longer than exec_timeout, or not a duration, is ignored, as the watchdog does).
 * @param {number} execMs @param {string | string[] | undefined} header @returns {number} ms
 */
function requestTimeout(execMs, header) {
  const text = Array.isArray(header) ? header[0] : header;
  if (!text) return execMs;
  try {
    const ms = parseDurationMs(text);
    return ms > 0 && ms <= execMs ? ms : execMs;
  } catch {
    return execMs;
  }
}

/**
 * `POST /_/profile {"batch": b, "seconds": s}`: closed-loop batches of b zero instances through the
 * batcher and the token gate (so the replica's current quota applies) for s seconds (≤ 10).
 * Answers the capability point: instances/s and batch latency. Used by the platform at deploy.
 * @param {ServerDeps} deps
 * @param {http.IncomingMessage} req
 * @param {http.ServerResponse} res
 */
async function profile(deps, req, res) {
  const body = await readBody(req, 4096);
  /** @type {any} */
  let q;
  try {
    q = JSON.parse(body.toString() || '{}');
  } catch {
    throw badInput('profile body must be JSON {"batch": n, "seconds": s}');
  }
  const model = deps.model();
  const batcher = deps.batcher();
  if (!deps.state.ready || !model || !batcher) throw notReady('the model is still loading');
  const batch = Number(q.batch ?? 1);
  const seconds = Number(q.seconds ?? 1);
  if (!Number.isInteger(batch) || batch < 1 || batch > 1024) throw badInput(`batch: ${q.batch} must be an integer in [1, 1024]`);
  if (!(seconds > 0 && seconds <= 10)) throw badInput(`seconds: ${q.seconds} must be in (0, 10]`);
  const zeros = model.zeroInputs(batch); // issue 25: tensors for any model (model.js)
  /** @type {number[]} */
  const lat = [];
  const end = performance.now() + seconds * 1000;
  const started = performance.now();
  let instances = 0;
  while (performance.now() < end) {
    const t0 = performance.now();
    await batcher.infer(zeros);
    lat.push(performance.now() - t0);
    instances += batch;
  }
  const elapsed = (performance.now() - started) / 1000;
  lat.sort((a, b) => a - b);
  const r3 = (/** @type {number} */ x) => Math.round(x * 1000) / 1000;
  return sendJson(res, 200, {
    batch,
    seconds: r3(elapsed),
    batches: lat.length,
    instancesPerSec: r3(instances / elapsed),
    latencyMsP50: r3(lat[Math.floor(lat.length / 2)] ?? 0),
    latencyMsMean: r3(lat.reduce((a, b) => a + b, 0) / Math.max(1, lat.length)),
  });
}

/**
 * @param {ServerDeps} deps
 * @param {http.IncomingMessage} req
 * @param {http.ServerResponse} res
 * @param {AbortSignal} [signal] exec_timeout's: a request still queued when it aborts does not run
 */
async function infer(deps, req, res, signal) {
  const body = await readBody(req, deps.maxBodyBytes);
  const model = deps.model();
  const batcher = deps.batcher();
  const codec = deps.codec();
  if (deps.state.draining) throw new RuntimeError('shutting_down', 503, 'the function is shutting down');
  if (!deps.state.ready || !model || !batcher || !codec) throw notReady('the model is still loading; retry after GET /_/ready answers 200');
  deps.stats.requests += 1;
  const ctx = {
    labels: codec.labels,
    outputDims: {},
    model: model.info,
    defaults: { preprocess: require('./codec').defaultPreprocess, postprocess: require('./codec').defaultPostprocess },
  };
  /** @type {unknown[]} */
  let raw;
  try {
    raw = await codec.preprocess(body, req.headers, ctx);
  } catch (err) {
    if (err instanceof RuntimeError) throw err;
    throw badInput(err instanceof Error ? err.message : String(err));
  }
  if (!Array.isArray(raw) || raw.length === 0) throw badInput('preprocess produced no instances');
  const instances = raw.map((x, i) => model.toInstance(x, i));
  const result = await batcher.submit(instances, { signal });
  /** @type {Record<string, Float32Array[]>} */
  const outputs = {};
  for (const [name, out] of Object.entries(result.outputs)) {
    outputs[name] = out.rows;
    /** @type {Record<string, number[]>} */ (ctx.outputDims)[name] = out.dims;
  }
  let predictions;
  try {
    predictions = await codec.postprocess(outputs, raw, ctx);
  } catch (err) {
    throw new RuntimeError('handler_error', 500, `postprocess failed: ${err instanceof Error ? err.message : err}`);
  }
  if (!Array.isArray(predictions)) throw new RuntimeError('handler_error', 500, 'postprocess must return an array');
  res.setHeader('X-Batch-Size', String(result.batchSize));
  res.setHeader('X-Batch-Latency-Ms', String(result.latencyMs));
  res.setHeader('X-Queue-Ms', String(result.queueMs));
  sendJsonTimed(res, 200, { predictions }, deps.writeTimeoutMs);
}

/** @param {http.ServerResponse} res @param {number} status @param {unknown} doc */
function sendJson(res, status, doc) {
  sendJsonTimed(res, status, doc, 0);
}

/**
 * @param {http.ServerResponse} res @param {unknown} err @param {ServerDeps} deps
 * @param {boolean} v2 the Open Inference Protocol's form `{"error": "..."}`, else `{"error": {code, message}}`
 */
function sendError(res, err, deps, v2) {
  if (res.headersSent || res.destroyed) return; // answered already (a 504 from exec_timeout)
  const known = err instanceof RuntimeError;
  if (!known || err.status >= 500) deps.stats.errors += 1;
  if (!known) deps.log(`internal error: ${err instanceof Error ? err.stack : err}`);
  if (v2) {
    const { status, body } = errorBody(err);
    return sendJsonTimed(res, status, body, deps.writeTimeoutMs);
  }
  const doc = known
    ? { error: { code: err.code, message: err.message } }
    : { error: { code: 'internal', message: err instanceof Error ? err.message : String(err) } };
  sendJsonTimed(res, known ? err.status : 500, doc, deps.writeTimeoutMs);
}

module.exports = { createServer, tensorsOf };
