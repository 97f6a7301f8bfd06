/**
 * The node model cache's eviction policy (issue 25, part 4), pure: which cached versions go so the
 * cache fits its size limit. One policy for both edges that keep a node's cache: the local agent's
 * ModelCache (its in-use versions are the ones its replicas hold) and the Kubernetes node agent
 * (its in-use versions are the ones the node's pods mount, read from the API server).
 */

/** A version directory's name: its SHA-256, lower-case hex. */
export const VERSION_NAME = /^[0-9a-f]{64}$/;

/** One cached version as the eviction policy sees it. */
export interface CacheEntry {
  sha256: string;
  bytes: number;
  /** ms since the epoch: the version directory's mtime, touched whenever a replica starts on it or is seen using it. */
  lastUsed: number;
  /** A running replica (a pod on the node) uses it, or a fetch into it is in flight: never evicted. */
  inUse: boolean;
}

export interface EvictionOptions {
  /** Versions never evicted (the one just fetched). */
  keep?: readonly string[];
  /** Now (ms since the epoch), with `minIdleMs`. */
  now?: number;
  /** A version used less than this long ago is not evicted (a replica may be starting on it that its edge has not seen yet). */
  minIdleMs?: number;
}

export interface EvictionPlan {
  /** Versions to remove, least recently used first. */
  evict: string[];
  totalBytes: number;
  /** What the cache holds after the evictions. */
  keptBytes: number;
  /** Bytes above the limit that stay because every version left is in use, kept or recently used (0 when the cache fits). */
  overBytes: number;
}

/**
 * Least recently used first until the cache fits in `maxBytes`; never a version in use, kept, or
 * used within `minIdleMs`. Ties in `lastUsed` go by sha256 so the plan does not depend on the
 * order of the entries.
 */
export function planEvictions(entries: readonly CacheEntry[], maxBytes: number, opts: EvictionOptions = {}): EvictionPlan {
  const keep = new Set(opts.keep ?? []);
  const recent = (e: CacheEntry) => opts.minIdleMs !== undefined && opts.now !== undefined && opts.now - e.lastUsed < opts.minIdleMs;
  const totalBytes = entries.reduce((s, e) => s + e.bytes, 0);
  let left = totalBytes;
  const evict: string[] = [];
  const order = [...entries].sort((a, b) => a.lastUsed - b.lastUsed || (a.sha256 < b.sha256 ? -1 : a.sha256 > b.sha256 ? 1 : 0));
  for (const e of order) {
    if (left <= maxBytes) break;
    if (e.inUse || keep.has(e.sha256) || recent(e)) continue;
    evict.push(e.sha256);
    left -= e.bytes;
  }
  return { evict, totalBytes, keptBytes: left, overBytes: Math.max(0, left - maxBytes) };
}
