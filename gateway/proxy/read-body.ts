import type { IncomingMessage } from 'node:http';
import { ErrorCode, PlatformError } from '../errors';

const tooLarge = (limit: number) =>
  new PlatformError(ErrorCode.PayloadTooLarge, `request body exceeds ${limit} bytes`, 'body');

/** Reads a request body into memory, failing with 413 as soon as it passes `limit` bytes. */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (declared > limit) return Promise.reject(tooLarge(limit));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > limit) {
        req.removeAllListeners('data');
        req.resume();
        reject(tooLarge(limit));
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)));
    req.on('error', reject);
  });
}
