// @ts-check
'use strict';
/** Errors with a code and an HTTP status; the server turns them into `{"error":{code,message}}`. */

class RuntimeError extends Error {
  /**
   * @param {string} code   machine-readable code, e.g. `bad_input`
   * @param {number} status HTTP status
   * @param {string} message
   */
  constructor(code, status, message) {
    super(message);
    this.code = code;
    this.status = status;
  }
}

/** @param {string} message */
const badInput = (message) => new RuntimeError('bad_input', 400, message);
/** @param {string} message */
const modelError = (message) => new RuntimeError('model_error', 500, message);
/**
 * ONNX Runtime failed on one request's own validated tensors (an index past a table, say): the
 * request's values are at fault, not the runtime (issue 25). 400, code `model_rejected_input`.
 * @param {string} message
 */
const modelRejected = (message) => new RuntimeError('model_rejected_input', 400, message);
/** @param {string} message */
const notReady = (message) => new RuntimeError('not_ready', 503, message);

/**
 * What a request aborted while queued rejects with: the signal's reason when an Error (the server's
 * exec_timeout 504), else a 504 `timeout`.
 * @param {AbortSignal} signal
 */
const abortReason = (signal) => (signal.reason instanceof Error ? signal.reason : new RuntimeError('timeout', 504, 'the request was aborted while queued'));

module.exports = { RuntimeError, badInput, modelError, modelRejected, notReady, abortReason };
