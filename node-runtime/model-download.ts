import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, realpathSync, statSync } from 'node:fs';
import { get as httpGet, IncomingMessage } from 'node:http';
import { get as httpsGet } from 'node:https';
import { join, relative, sep } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/** Where a model comes from: a path in the model store or an http(s) registry (see gateway/registry/model-uri-spec.ts). */
export interface ModelOrigin {
  uri: string;
  scheme: 'file' | 'http' | 'https';
  /** `file://`: the path inside the store. */
  storePath?: string;
}

export interface DownloadLimits {
  /** Largest model accepted, bytes: a source that sends more is cut off (the temp file removed by the caller). */
  maxBytes: number;
  /** The whole transfer, redirects included, ms. */
  timeoutMs: number;
  /** No byte for this long: the transfer is given up, ms. */
  idleMs: number;
  /** Redirects followed (http(s) only). */
  maxRedirects: number;
}

export const DEFAULT_LIMITS: Omit<DownloadLimits, 'maxBytes'> = { timeoutMs: 10 * 60_000, idleMs: 30_000, maxRedirects: 5 };

/** A fetch that failed for a reason the user can fix (wrong URI, unreachable registry, bad checksum). */
export class ModelFetchError extends Error {}

const fail = (msg: string) => new ModelFetchError(msg);

/**
 * Counts bytes and hashes them on the way to the file; errors out past `maxBytes` so a source
 * that streams forever stops at the limit instead of filling the disk.
 */
function meter(maxBytes: number, uri: string) {
  const hash = createHash('sha256');
  let bytes = 0;
  const t = new Transform({
    transform(chunk: Buffer, _enc, done) {
      bytes += chunk.length;
      if (bytes > maxBytes) return done(fail(`${uri}: more than ${maxBytes} bytes (the model size limit); transfer stopped`));
      hash.update(chunk);
      done(null, chunk);
    },
  });
  return { t, result: () => ({ bytes, sha256: hash.digest('hex') }) };
}

/** The store file a `file://` origin names: a regular file whose real path (links followed) is inside the store. */
export function storeFile(storeDir: string, storePath: string, uri: string): string {
  let root: string;
  try {
    root = realpathSync(storeDir);
  } catch {
    throw fail(`${uri}: the model store ${storeDir} does not exist (MLFAAS_MODEL_STORE)`);
  }
  let real: string;
  try {
    real = realpathSync(join(root, storePath));
  } catch {
    throw fail(`${uri}: no such file in the model store (${join(storeDir, storePath)})`);
  }
  const rel = relative(root, real);
  if (!rel || rel.startsWith('..' + sep) || rel === '..') throw fail(`${uri}: leads out of the model store (a symbolic link?); refused`);
  if (!statSync(real).isFile()) throw fail(`${uri}: is not a regular file`);
  return real;
}

function request(url: URL, signal: AbortSignal, idleMs: number): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const get = url.protocol === 'https:' ? httpsGet : httpGet;
    const req = get(url, { signal, headers: { accept: 'application/octet-stream, */*' } }, resolve);
    req.setTimeout(idleMs, () => req.destroy(fail(`${url.href}: no answer for ${idleMs} ms`)));
    req.on('error', reject);
  });
}

/** GET with bounded redirects (http(s) only, never https → http, never credentials in a Location). */
async function open(uri: string, signal: AbortSignal, limits: DownloadLimits): Promise<IncomingMessage> {
  let url = new URL(uri);
  for (let hops = 0; ; hops++) {
    const res = await request(url, signal, limits.idleMs).catch((e: Error) => {
      if (e instanceof ModelFetchError) throw e;
      throw fail(`${url.href}: ${signal.aborted ? `not fetched within ${limits.timeoutMs} ms` : `cannot reach the registry (${e.message})`}`);
    });
    const status = res.statusCode ?? 0;
    if (status >= 300 && status < 400 && res.headers.location) {
      res.resume();
      if (hops >= limits.maxRedirects) throw fail(`${uri}: more than ${limits.maxRedirects} redirects`);
      const next = new URL(res.headers.location, url);
      if (next.protocol !== 'http:' && next.protocol !== 'https:') throw fail(`${uri}: redirected to ${next.protocol} (only http(s) is followed)`);
      if (url.protocol === 'https:' && next.protocol === 'http:') throw fail(`${uri}: redirected from https to http; refused`);
      if (next.username || next.password) throw fail(`${uri}: redirected to a URL with credentials; refused`);
      url = next;
      continue;
    }
    if (status !== 200) {
      res.resume();
      throw fail(`${url.href}: the registry answered HTTP ${status}`);
    }
    return res;
  }
}

/**
 * Copies the model at `origin` into `dest` (a new file), hashing it on the way. Bounded in size
 * (`maxBytes`, also checked against Content-Length first) and time (`timeoutMs` in all, `idleMs`
 * without a byte). Returns its size and SHA-256; the caller compares and renames.
 */
export async function fetchModel(origin: ModelOrigin, storeDir: string, dest: string, limits: DownloadLimits): Promise<{ bytes: number; sha256: string }> {
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(), limits.timeoutMs);
  const m = meter(limits.maxBytes, origin.uri);
  try {
    let source: NodeJS.ReadableStream;
    if (origin.scheme === 'file') {
      source = createReadStream(storeFile(storeDir, origin.storePath ?? '', origin.uri));
    } else {
      const res = await open(origin.uri, ac.signal, limits);
      const declared = Number(res.headers['content-length']);
      if (Number.isFinite(declared) && declared > limits.maxBytes) {
        res.destroy();
        throw fail(`${origin.uri}: ${declared} bytes, above the model size limit ${limits.maxBytes}`);
      }
      res.setTimeout(limits.idleMs, () => res.destroy(fail(`${origin.uri}: no byte for ${limits.idleMs} ms; transfer stopped`)));
      source = res;
    }
    await pipeline(source, m.t, createWriteStream(dest, { flags: 'wx', mode: 0o600 }), { signal: ac.signal }).catch((e: Error) => {
      if (e instanceof ModelFetchError) throw e;
      if (ac.signal.aborted) throw fail(`${origin.uri}: not fetched within ${limits.timeoutMs} ms; transfer stopped`);
      throw fail(`${origin.uri}: transfer failed (${e.message})`);
    });
    return m.result();
  } finally {
    clearTimeout(timer);
  }
}
