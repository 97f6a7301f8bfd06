// @ts-check
'use strict';
/**
 * mlfaas ml-inference runtime: serves function/model.onnx over HTTP with dynamic batching and a
 * token gate per batch. Run as `node index.js` in a directory laid out as the image: these files
 * at the root and the handler folder in `function/`. See README.md for the contract.
 */
const { parseConfig, ConfigError } = require('./config');
const { Model } = require('./model');
const { Batcher } = require('./batcher');
const { Stats, round } = require('./stats');
const { loadCodec } = require('./codec');
const { loadTokenGate } = require('./gate');
const { createServer, tensorsOf } = require('./server');

/** @param {string} line */
const log = (line) => process.stderr.write(`[ml-inference] ${line}\n`);

async function main() {
  const config = parseConfig(process.env, process.cwd());
  const stats = new Stats();
  const state = { ready: false, draining: false };
  /** @type {Model | null} */
  let model = null;
  /** @type {Batcher | null} */
  let batcher = null;
  /** @type {ReturnType<typeof loadCodec> | null} */
  let codec = null;

  const deps = {
    state, stats, log, maxBodyBytes: config.maxBodyBytes,
    model: () => model, batcher: () => batcher, codec: () => codec,
    functionName: config.functionName, modelVersion: config.modelVersion,
    readTimeoutMs: config.readTimeoutMs, writeTimeoutMs: config.writeTimeoutMs, execTimeoutMs: config.execTimeoutMs,
    counters: { timeouts: 0 },
  };
  const { server, activeRequests: tcpActive } = createServer(deps);
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => resolve(undefined));
  });
  /** @type {import('http').Server | null} */
  let unixServer = null;
  let unixActive = () => 0;
  if (config.socketPath) {
    const s = createServer(deps);
    unixServer = s.server;
    unixActive = s.activeRequests;
    try {
      require('fs').unlinkSync(config.socketPath);
    } catch {
      // not there: fine
    }
    await new Promise((resolve, reject) => {
      s.server.once('error', reject);
      s.server.listen(config.socketPath, () => resolve(undefined));
    });
  }
  const activeRequests = () => tcpActive() + unixActive();
  const addr = server.address();
  const port = addr && typeof addr === 'object' ? addr.port : config.port;
  // One machine-readable line: the local provider and the tests read the port from it.
  process.stdout.write(`${JSON.stringify({ type: 'listening', host: config.host, port, socket: config.socketPath || undefined, pid: process.pid })}\n`);

  let shuttingDown = false;
  /** @param {string} why */
  const shutdown = async (why) => {
    if (shuttingDown) return;
    shuttingDown = true;
    state.draining = true;
    log(`${why}: draining (${batcher ? batcher.queueLength : 0} queued)`);
    const timer = setTimeout(() => {
      log(`drain did not finish in ${config.drainTimeoutMs} ms; exiting`);
      process.exit(1);
    }, config.drainTimeoutMs);
    timer.unref();
    for (const srv of unixServer ? [server, unixServer] : [server]) {
      srv.close();
      srv.closeIdleConnections();
    }
    if (batcher) await batcher.idle();
    // Let the last responses flush before the process ends.
    for (let i = 0; i < 100 && activeRequests() > 0; i++) await new Promise((r) => setTimeout(r, 10));
    if (gate.close) await Promise.resolve(gate.close()).catch(() => undefined);
    log('drained; exiting');
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
  if (config.watchParent) watchParent(() => void shutdown('parent process exited'));

  const { gate, kind } = loadTokenGate({ socketPath: config.tokendSocket, device: 'cpu' }, log);
  const loaded = await Model.load(config.modelPath, { intraOpThreads: config.intraOpThreads, allowSpinning: config.allowSpinning });
  let maxBatchSize = config.maxBatchSize;
  if (!loaded.info.batchable) {
    // issue 25 (model.js / batcher.js): no shared dynamic axis 0, so each request runs alone
    log(`the model has no dynamic batch axis shared by its inputs and outputs (axis 0 fixed at ${loaded.info.fixedBatch}); batching disabled`);
    maxBatchSize = Math.max(1, loaded.info.fixedBatch);
  }
  codec = loadCodec(config.functionDir);
  const report = reporter(config.reportIntervalMs, stats, () => (batcher ? batcher.queueLength : 0));
  batcher = new Batcher({ model: loaded, gate, stats, maxBatchSize, batchTimeoutMs: config.batchTimeoutMs, onBatch: report, log });

  // Warm-up: one run of a zero instance, outside the stats and the gate.
  const started = Date.now();
  await loaded.warmup();
  model = loaded;
  state.ready = !state.draining;
  process.stdout.write(`${JSON.stringify({
    type: 'ready', input: loaded.info.inputName, shape: ['batch', ...loaded.info.instanceDims],
    outputs: loaded.info.outputNames, warmupMs: Date.now() - started, maxBatchSize,
    batchTimeoutMs: config.batchTimeoutMs, tokenGate: kind, handler: codec.handlerFile !== null,
    timeoutsMs: { read: config.readTimeoutMs, write: config.writeTimeoutMs, exec: config.execTimeoutMs }, modelVersion: config.modelVersion,
    tensors: tensorsOf(loaded.info),
  })}\n`);
}

/**
 * A batch report line on stdout, at most once per interval: counts since the last line.
 * @param {number} intervalMs 0 turns it off
 * @param {Stats} stats
 * @param {() => number} queueLength
 * @returns {(size: number, latencyMs: number) => void}
 */
function reporter(intervalMs, stats, queueLength) {
  let last = Date.now();
  let batches = 0;
  let instances = 0;
  return (size) => {
    batches += 1;
    instances += size;
    const now = Date.now();
    if (intervalMs <= 0 || now - last < intervalMs) return;
    process.stdout.write(`${JSON.stringify({
      type: 'batches', windowMs: now - last, batches, meanBatchSize: round(instances / batches),
      p50Ms: stats.quantile(0.5), p99Ms: stats.quantile(0.99), queueLength: queueLength(),
    })}\n`);
    last = now;
    batches = 0;
    instances = 0;
  };
}

/**
 * Exit with the parent: poll `process.ppid` every second and call `onGone` when it changes.
 * A process whose parent is already init (pid 0 or 1: a container's entry point) is not watched.
 * @param {() => void} onGone
 */
function watchParent(onGone) {
  const initial = process.ppid;
  if (initial <= 1) return;
  const t = setInterval(() => {
    if (process.ppid !== initial) {
      clearInterval(t);
      onGone();
    }
  }, 1000);
  t.unref();
}

main().catch((err) => {
  // a bad setting is the operator's to fix: its message names the variable; no stack
  log(`fatal: ${err instanceof ConfigError ? `bad configuration: ${err.message}` : err instanceof Error ? err.stack : err}`);
  process.exit(1);
});
