// @ts-check
'use strict';
/**
 * The runtime's HTTP edges shared by both protocols: reading a body within a size limit
 * (and undoing `Content-Encoding: gzip | deflate`), sending an answer under `write_timeout`.
 */
const zlib = require('node:zlib');
const { RuntimeError, badInput } = require('./errors');

/**
 * @param {import('node:http').IncomingMessage} req
 * @param {number} limit bytes
 * @returns {Promise<Buffer>}
 */
function readBody(req, limit) {
  return new Promise((resolve, reject) => {
    /** @type {Buffer[]} */
    const chunks = [];
    let size = 0;
    let failed = false;
    req.on('data', (c) => {
      if (failed) return;
      size += c.length;
      if (size > limit) {
        failed = true;
        reject(tooLarge(limit));
        req.resume();
        return;
      }
      chunks.push(c);
    });
    let ended = false;
    req.on('end', () => {
      ended = true;
      if (!failed) resolve(Buffer.concat(chunks));
    });
    req.on('error', reject);
    // a connection that closes mid-body (the client gave up, or exec_timeout answered and closed it) settles the read
    req.on('close', () => {
      if (!ended && !failed) reject(new RuntimeError('client_closed', 400, 'the connection closed before the whole body arrived'));
    });
  });
}

/** @param {number} limit */
const tooLarge = (limit) => new RuntimeError('payload_too_large', 413, `request body exceeds ${limit} bytes (MAX_BODY_BYTES)`);

/**
 * Undo the request's `Content-Encoding` (Triton's client compresses with gzip or deflate when asked).
 * @param {Buffer} body
 * @param {string | undefined} encoding the header
 * @param {number} limit bytes the decoded body may have
 * @returns {Buffer}
 */
function decodeBody(body, encoding, limit) {
  const enc = (encoding || 'identity').trim().toLowerCase();
  if (enc === 'identity' || enc === '') return body;
  if (enc !== 'gzip' && enc !== 'deflate') throw badInput(`Content-Encoding: ${JSON.stringify(encoding)} is not supported (gzip, deflate, identity)`);
  try {
    return enc === 'gzip' ? zlib.gunzipSync(body, { maxOutputLength: limit }) : zlib.inflateSync(body, { maxOutputLength: limit });
  } catch (err) {
    if (err instanceof RangeError) throw tooLarge(limit);
    throw badInput(`Content-Encoding: the body is not valid ${enc} data (${err instanceof Error ? err.message : err})`);
  }
}

/**
 * Write an answer; with `writeTimeoutMs` > 0 the connection is destroyed if the answer has not been
 * handed to the OS that long after writing began (a client that does not read). No-op once headers are out.
 * @param {import('node:http').ServerResponse} res
 * @param {number} status
 * @param {Record<string, string>} headers
 * @param {Buffer | string} body
 * @param {number} writeTimeoutMs 0: none
 * @returns {boolean} whether this call wrote the answer
 */
function send(res, status, headers, body, writeTimeoutMs) {
  if (res.headersSent || res.destroyed) return false;
  guardWrite(res, writeTimeoutMs);
  res.writeHead(status, { ...headers, 'Content-Length': String(Buffer.byteLength(body)) });
  res.end(body);
  return true;
}

/**
 * @param {{ once(ev: string, f: () => void): unknown, destroy(): unknown, writableFinished?: boolean }} res
 * @param {number} ms 0: none
 */
function guardWrite(res, ms) {
  if (!(ms > 0)) return;
  const t = setTimeout(() => {
    if (!res.writableFinished) res.destroy();
  }, ms);
  t.unref();
  const clear = () => clearTimeout(t);
  res.once('finish', clear);
  res.once('close', clear);
}

/**
 * @param {import('node:http').ServerResponse} res @param {number} status @param {unknown} doc @param {number} writeTimeoutMs
 * @returns {boolean}
 */
function sendJson(res, status, doc, writeTimeoutMs) {
  return send(res, status, { 'Content-Type': 'application/json' }, JSON.stringify(doc), writeTimeoutMs);
}

module.exports = { readBody, decodeBody, send, sendJson, guardWrite };
