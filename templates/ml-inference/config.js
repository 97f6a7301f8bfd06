// @ts-check
'use strict';
/**
 * Runtime configuration, parsed once from the environment. Nothing else in the runtime reads
 * `process.env` (except `index.js`, which hands the token daemon socket to the gate).
 */
const path = require('node:path');
const { parseDurationMs, DurationError } = require('./durations');

/**
 * @typedef {object} RuntimeConfig
 * @property {number} port             TCP port of the HTTP server.
 * @property {string} host             Bind address.
 * @property {string} socketPath       Also serve on this unix socket (`MLFAAS_SOCKET`); '' for none.
 * @property {string} functionDir      Absolute path of the handler folder (`function/`).
 * @property {string} modelPath        Absolute path of the ONNX model.
 * @property {number} maxBatchSize     Most instances in one ONNX run.
 * @property {number} batchTimeoutMs   Extra wait for a batch to fill once the model is idle, ms.
 * @property {number} maxBodyBytes     Largest accepted request body, bytes.
 * @property {number} drainTimeoutMs   Longest SIGTERM drain before giving up, ms.
 * @property {number} reportIntervalMs Least time between two batch report lines on stdout, ms (0: none).
 * @property {number} intraOpThreads   onnxruntime intra-op threads (0: its default): the cores of the
 *                                     replica's cpuset (`MLFAAS_CPU_CORES`, set by the platform) unless
 *                                     the function asks for a number (`ORT_INTRA_OP_THREADS`).
 * @property {boolean} allowSpinning   onnxruntime's idle threads spin-wait for work (`ORT_ALLOW_SPINNING=1`);
 *                                     off by default: under a CPU quota (CFS bandwidth) a spinning
 *                                     thread burns the replica's budget, and two spinning threads in a
 *                                     one-core cpuset halve its throughput (mobilenet: 62.7 vs 124/s).
 * @property {boolean} watchParent     Exit when the parent process goes away.
 * @property {string | undefined} tokendSocket Token daemon socket, if any.
 * @property {string} functionName    The function's name for the Open Inference Protocol's metadata (`MLFAAS_FUNCTION_NAME`;
 *                                     '' when unset: the name in the request path is reported).
 * @property {string} modelVersion    The model version reported on /v2 (`MLFAAS_MODEL_VERSION`, default '1').
 * @property {number | null} readTimeoutMs  `read_timeout`: longest time to receive a whole request (408 past it), ms; 0: none;
 *                                     null when unset (Node's defaults stay).
 * @property {number} writeTimeoutMs   `write_timeout`: longest time to write an answer (the connection is closed past it), ms; 0: none.
 * @property {number} execTimeoutMs    `exec_timeout`: longest time from a request's arrival to its answer (504 past it), ms; 0: none.
 */

/** Thrown for a malformed setting; the message names the variable and the value. */
class ConfigError extends Error {}

/**
 * @param {NodeJS.ProcessEnv} env
 * @param {string} name
 * @param {number} def
 * @param {number} min
 * @param {number} max
 */
function intVar(env, name, def, min, max) {
  const raw = env[name];
  if (raw === undefined || raw === '') return def;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new ConfigError(`${name}=${JSON.stringify(raw)}: want an integer in [${min}, ${max}]`);
  }
  return n;
}

/**
 * An OpenFaaS timeout variable: a Go duration (`10s`, `1m30s`, `500ms`, `0` = none), as of-watchdog reads them.
 * @param {NodeJS.ProcessEnv} env
 * @param {string} name
 * @returns {number | null} ms; null when unset or empty
 */
function durationVar(env, name) {
  const raw = env[name];
  if (raw === undefined || raw === '') return null;
  let ms;
  try {
    ms = parseDurationMs(raw);
  } catch (err) {
    if (!(err instanceof DurationError)) throw err;
    throw new ConfigError(`${name}=${JSON.stringify(raw)}: want a Go duration such as "10s", "1m30s", "500ms" or "0" (none); ${err.message}`);
  }
  if (ms < 0) throw new ConfigError(`${name}=${JSON.stringify(raw)}: a timeout cannot be negative`);
  // Node's timers hold at most 2^31 - 1 ms (24.8 days); longer is as good as none
  return ms > 2 ** 31 - 1 ? 0 : ms;
}

/**
 * @param {NodeJS.ProcessEnv} env
 * @param {string} cwd directory the image was laid out in (holds `function/`)
 * @returns {RuntimeConfig}
 */
function parseConfig(env, cwd) {
  const functionDir = path.resolve(cwd, env.FUNCTION_DIR || 'function');
  return {
    port: intVar(env, 'PORT', 8080, 0, 65535),
    host: env.HOST || '0.0.0.0',
    // Also serve on this unix socket (the local provider's gateway path: cheaper than TCP loopback).
    socketPath: env.MLFAAS_SOCKET || '',
    functionDir,
    modelPath: path.resolve(functionDir, env.MODEL_PATH || 'model.onnx'),
    maxBatchSize: intVar(env, 'MAX_BATCH_SIZE', 8, 1, 4096),
    batchTimeoutMs: intVar(env, 'BATCH_TIMEOUT_MS', 0, 0, 60_000),
    maxBodyBytes: intVar(env, 'MAX_BODY_BYTES', 64 * 1024 * 1024, 1024, 1024 * 1024 * 1024),
    drainTimeoutMs: intVar(env, 'DRAIN_TIMEOUT_MS', 9000, 0, 600_000),
    reportIntervalMs: intVar(env, 'REPORT_INTERVAL_MS', 10_000, 0, 3_600_000),
    // more threads than cores in the cpuset only contend for them (and spin through the CFS quota)
    intraOpThreads: intVar(env, 'ORT_INTRA_OP_THREADS', intVar(env, 'MLFAAS_CPU_CORES', 0, 0, 1024), 0, 1024),
    allowSpinning: intVar(env, 'ORT_ALLOW_SPINNING', 0, 0, 1) === 1,
    watchParent: env.MLFAAS_WATCH_PARENT !== '0',
    tokendSocket: env.MLFAAS_TOKEND_SOCKET || undefined,
    functionName: env.MLFAAS_FUNCTION_NAME || '',
    modelVersion: env.MLFAAS_MODEL_VERSION || '1',
    readTimeoutMs: durationVar(env, 'read_timeout'),
    writeTimeoutMs: durationVar(env, 'write_timeout') ?? 0,
    execTimeoutMs: durationVar(env, 'exec_timeout') ?? 0,
  };
}

module.exports = { parseConfig, ConfigError };
