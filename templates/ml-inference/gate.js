// @ts-check
'use strict';
const fs = require('node:fs');
const path = require('node:path');
/**
 * The token gate in front of every ONNX run. `./tokens.js` (the native token limiter's client,
 * shipped with the platform) is used when present; otherwise every batch runs ungated.
 */

/**
 * @typedef {object} TokenGate
 * @property {(estimatedMs: number) => Promise<unknown>} acquire wait for device time for one batch
 * @property {(actualMs: number) => void} release report the time the batch actually used
 * @property {() => unknown} [close]
 */

/** @type {TokenGate} */
const noopGate = { acquire: async () => undefined, release: () => undefined };

/**
 * @param {{ socketPath: string | undefined, device: string }} opts
 * @param {(line: string) => void} log
 * @returns {{ gate: TokenGate, kind: string }}
 */
function loadTokenGate(opts, log) {
  const file = path.join(__dirname, 'tokens.js');
  // no tokend configured (MLFAAS_TOKEND_SOCKET unset): ungated, and say so
  if (!opts.socketPath || !fs.existsSync(file)) return { gate: noopGate, kind: 'none' };
  /** @type {any} */
  const mod = require(file);
  if (!mod || typeof mod.createTokenGate !== 'function') {
    log('tokens.js has no createTokenGate(); running ungated');
    return { gate: noopGate, kind: 'none' };
  }
  return { gate: mod.createTokenGate(opts), kind: 'tokens' };
}

module.exports = { loadTokenGate, noopGate };
