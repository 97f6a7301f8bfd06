import type { IncomingMessage } from 'node:http';
import { ErrorCode, PlatformError } from '../errors';

const tooLarge = (limit: number) =>
  new PlatformError(ErrorCode.PayloadTooLarge, `request body exceeds ${limit} bytes`, 'body');

const tooSlow = (ms: number) =>
  new PlatformError(ErrorCode.RequestTimeout, `the request body was not received within the function's read_timeout (${ms} ms)`, 'body');

/**
 * Reads a request body into memory, failing with 413 as soon as it passes `limit` bytes and, when
 * `timeoutMs` is given (the function's `read_timeout`), with 408 when it has not all arrived by then.
 */
export function readBody(req: IncomingMessage, limit: number, timeoutMs?: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (declared > limit) return Promise.reject(tooLarge(limit));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let timer: NodeJS.Timeout | undefined;
    const stop = () => {
      if (timer) clearTimeout(timer);
      req.removeAllListeners('data');
      req.resume();
    };
    if (timeoutMs !== undefined) {
      timer = setTimeout(() => {
        stop();
        reject(tooSlow(timeoutMs));
      }, timeoutMs);
    }
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > limit) {
        stop();
        reject(tooLarge(limit));
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => {
      if (timer) clearTimeout(timer);
      resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks));
    });
    req.on('error', (e) => {
      if (timer) clearTimeout(timer);
      reject(e);
    });
  });
}
