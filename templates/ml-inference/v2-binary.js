// @ts-check
'use strict';
/**
 * The binary tensor extension of the Open Inference Protocol (Triton's `binary_tensor_data`, also
 * KServe's): the body is the JSON header (`Inference-Header-Content-Length` bytes) then each binary
 * tensor's bytes in order. Fixed-size elements little-endian, row-major; a BYTES element is a 4-byte
 * little-endian length then its bytes. Pure.
 */
const dtypes = require('./dtypes');
const { badInput } = require('./errors');

/** The header of the binary tensor extension (Triton, KServe), as Node lower-cases it. */
const HEADER_LENGTH = 'inference-header-content-length';

/**
 * Split a body into its JSON header and the binary part that follows it.
 * @param {Buffer} body already decompressed
 * @param {import('node:http').IncomingHttpHeaders} headers
 * @returns {{ json: Buffer, binary: Buffer }}
 */
function splitBody(body, headers) {
  const raw = headers[HEADER_LENGTH];
  if (raw === undefined) return { json: body, binary: body.subarray(body.length) };
  const text = Array.isArray(raw) ? raw[0] : raw;
  if (!/^\d+$/.test(text.trim()) || Number(text) > body.length) {
    throw badInput(`Inference-Header-Content-Length: ${JSON.stringify(text)} is not a byte count within the body (${body.length} bytes)`);
  }
  const n = Number(text);
  return { json: body.subarray(0, n), binary: body.subarray(n) };
}

/**
 * @param {import('./dtypes').Datatype} datatype @param {Buffer} bytes @param {number} n elements the shape holds @param {string} where
 * @returns {import('./dtypes').TensorData}
 */
function fromBinary(datatype, bytes, n, where) {
  if (datatype === 'BYTES') {
    /** @type {Buffer[]} */
    const items = [];
    let at = 0;
    while (at < bytes.length) {
      if (at + 4 > bytes.length) throw badInput(`${where}: BYTES element ${items.length} has a cut length prefix (want 4 bytes, little-endian)`);
      const len = bytes.readUInt32LE(at);
      if (at + 4 + len > bytes.length) throw badInput(`${where}: BYTES element ${items.length} says ${len} bytes, past binary_data_size`);
      items.push(Buffer.from(bytes.subarray(at + 4, at + 4 + len)));
      at += 4 + len;
    }
    if (items.length !== n) throw badInput(`${where}: ${items.length} BYTES elements in binary_data_size, but the shape holds ${n}`);
    return items;
  }
  const per = dtypes.bytesPerElement(datatype);
  if (bytes.length !== n * per) {
    throw badInput(`${where}.parameters.binary_data_size: ${bytes.length} bytes, but ${n} ${datatype} elements are ${n * per} bytes`);
  }
  const out = /** @type {any} */ (dtypes.arrayFor(datatype, n));
  new Uint8Array(out.buffer, out.byteOffset, out.byteLength).set(bytes); // copy: aligned for the typed array
  if (datatype === 'BOOL') for (let i = 0; i < n; i++) out[i] = out[i] ? 1 : 0;
  return out;
}

/** @param {import('./dtypes').Datatype} datatype @param {import('./dtypes').TensorData} data @returns {Buffer} */
function toBinary(datatype, data) {
  if (datatype !== 'BYTES') {
    const v = /** @type {import('./dtypes').NumericArray} */ (data);
    return Buffer.from(v.buffer, v.byteOffset, v.byteLength);
  }
  const parts = [];
  for (const s of /** @type {Array<string | Buffer>} */ (data)) {
    const b = typeof s === 'string' ? Buffer.from(s, 'utf8') : s;
    const len = Buffer.alloc(4);
    len.writeUInt32LE(b.length, 0);
    parts.push(len, b);
  }
  return Buffer.concat(parts);
}

module.exports = { splitBody, fromBinary, toBinary, HEADER_LENGTH };
