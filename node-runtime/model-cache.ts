import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { extname, join } from 'node:path';
import { readCacheDir, sweepCacheDir, touchVersion } from './model-cache-dir';
import type { CacheEntry } from './model-cache-policy';
import { DEFAULT_LIMITS, DownloadLimits, fetchModel, ModelFetchError, ModelOrigin } from './model-download';

/** A model version to cache: where it comes from and the SHA-256 it must have. */
export interface ModelWanted extends ModelOrigin {
  sha256: string;
}

export interface ModelCacheOptions {
  /** The node's cache directory (shared by its replicas; root's). */
  dir: string;
  /** `MLFAAS_MODEL_STORE`: the root `file://` URIs name paths in. */
  storeDir: string;
  /** `MLFAAS_MODEL_CACHE_BYTES`: the cache's size; least recently used versions not in use are evicted beyond it. */
  maxBytes: number;
  /** Download bounds (size: at most `maxBytes`). */
  limits?: Partial<Omit<DownloadLimits, 'maxBytes'>> & { maxBytes?: number };
  log?(line: string): void;
}

export const MODEL_CACHE_DEFAULT_BYTES = 10 * 1024 ** 3;

export type { CacheEntry } from './model-cache-policy';

/** The model file's name in its version directory: `model` + the URI's extension (`.onnx` when it has none). */
export function modelFileName(uri: string): string {
  let path = uri;
  try {
    path = new URL(uri).pathname;
  } catch {
    // keep the raw text
  }
  const ext = extname(path);
  return `model${/^\.[A-Za-z0-9]{1,10}$/.test(ext) ? ext.toLowerCase() : '.onnx'}`;
}

/**
 * A node's model cache: each version (keyed by its SHA-256) is fetched once into
 * `<dir>/<sha256>/model.<ext>`, verified while it streams (written to a temp file, renamed when its
 * hash matches), and shared by the node's replicas. Concurrent acquires of one version wait on one
 * fetch. Beyond `maxBytes`, least recently used versions that no replica holds are evicted.
 */
export class ModelCache {
  private readonly fetching = new Map<string, Promise<void>>();
  /** holder (replica id) → the versions it holds. */
  private readonly holders = new Map<string, Set<string>>();
  private readonly limits: DownloadLimits;

  constructor(private readonly opts: ModelCacheOptions) {
    mkdirSync(opts.dir, { recursive: true, mode: 0o700 });
    this.limits = { ...DEFAULT_LIMITS, ...opts.limits, maxBytes: Math.min(opts.limits?.maxBytes ?? Infinity, opts.maxBytes) };
    // temp files of a fetch the previous process did not finish
    for (const n of readdirSync(opts.dir)) if (n.startsWith('.tmp-')) rmSync(join(opts.dir, n), { force: true });
  }

  private versionDir(sha: string): string {
    return join(this.opts.dir, sha);
  }

  /** Whether any holder holds `sha`. */
  inUse(sha: string): boolean {
    for (const s of this.holders.values()) if (s.has(sha)) return true;
    return false;
  }

  /**
   * The absolute path of the verified model file, fetched first if this node does not have it;
   * `holder` holds it (it is not evicted) until `release(holder)`. Throws a ModelFetchError naming
   * the URI when the fetch or the check fails.
   */
  async acquire(want: ModelWanted, holder: string): Promise<string> {
    const sha = want.sha256.toLowerCase();
    if (!/^[0-9a-f]{64}$/.test(sha)) throw new ModelFetchError(`${want.uri}: "${want.sha256}" is not a SHA-256`);
    const file = join(this.versionDir(sha), modelFileName(want.uri));
    // held before the fetch: an eviction that runs meanwhile (another version's) must not take it
    const held = this.holders.get(holder) ?? new Set<string>();
    held.add(sha);
    this.holders.set(holder, held);
    try {
      if (!existsSync(file)) {
        let p = this.fetching.get(file);
        if (!p) {
          p = this.fetch(want, sha, file).finally(() => this.fetching.delete(file));
          this.fetching.set(file, p);
        }
        await p;
        if (!existsSync(file)) throw new ModelFetchError(`${want.uri}: fetched, then gone from the cache (${file})`);
      }
    } catch (e) {
      this.drop(holder, sha);
      throw e;
    }
    this.touch(sha);
    return file;
  }

  /** `holder` no longer uses any version (its replica stopped). */
  release(holder: string): void {
    const held = this.holders.get(holder);
    this.holders.delete(holder);
    for (const sha of held ?? []) this.touch(sha);
  }

  private drop(holder: string, sha: string): void {
    const held = this.holders.get(holder);
    held?.delete(sha);
    if (held && !held.size) this.holders.delete(holder);
  }

  private touch(sha: string): void {
    touchVersion(this.opts.dir, sha);
  }

  private async fetch(want: ModelWanted, sha: string, file: string): Promise<void> {
    const tmp = join(this.opts.dir, `.tmp-${sha.slice(0, 12)}-${randomBytes(4).toString('hex')}`);
    const started = Date.now();
    try {
      const got = await fetchModel(want, this.opts.storeDir, tmp, this.limits);
      if (got.sha256 !== sha) {
        throw new ModelFetchError(`${want.uri}: checksum mismatch: mlfaas.model.sha256 is ${sha}, the ${got.bytes} bytes fetched hash to ${got.sha256}`);
      }
      const dir = this.versionDir(sha);
      mkdirSync(dir, { recursive: true, mode: 0o755 });
      chmodSync(dir, 0o755);
      chmodSync(tmp, 0o444); // readable by the replicas' users, written by no one
      renameSync(tmp, file);
      this.opts.log?.(`model ${sha.slice(0, 12)}: fetched ${got.bytes} bytes from ${want.uri} in ${Date.now() - started} ms, sha256 verified`);
      this.evict(sha);
    } finally {
      rmSync(tmp, { force: true });
    }
  }

  /** Held by a replica, or a fetch into it is in flight. */
  private busy(sha: string): boolean {
    const d = `${this.versionDir(sha)}/`;
    return this.inUse(sha) || [...this.fetching.keys()].some((k) => k.startsWith(d));
  }

  /** Every cached version with its size, last use and whether it is busy (held, or being fetched). */
  entries(): CacheEntry[] {
    return readCacheDir(this.opts.dir, (sha) => this.busy(sha));
  }

  /** Evicts least recently used versions not in use until the cache fits (never `keep`): the shared policy over this node's holders. */
  evict(keep?: string): string[] {
    return sweepCacheDir(this.opts.dir, this.opts.maxBytes, (sha) => this.busy(sha), { keep: keep ? [keep] : [] }, this.opts.log).evict;
  }
}
