/**
 * A node model cache directory on disk (issue 25, part 4): `<dir>/<sha256>/model.<ext>`, one
 * directory per version. The I/O both cache edges share (the local agent's ModelCache, the
 * Kubernetes node agent): read the versions with their size and last use, touch one, and sweep:
 * evict what the pure policy (model-cache-policy.ts) chooses. Each edge says which versions are in
 * use; a version directory holding a fetch's temp file (`.tmp-*`, the Kubernetes init container's)
 * counts as in use too.
 */
import { readdirSync, rmSync, statSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { type CacheEntry, type EvictionOptions, type EvictionPlan, planEvictions, VERSION_NAME } from './model-cache-policy';

/** Every version in `dir`: its bytes, its directory's mtime as the last use, and whether it is in use. */
export function readCacheDir(dir: string, inUse: (sha: string) => boolean): CacheEntry[] {
  const out: CacheEntry[] = [];
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return out;
  }
  for (const n of names) {
    if (!VERSION_NAME.test(n)) continue;
    const d = join(dir, n);
    try {
      const st = statSync(d);
      if (!st.isDirectory()) continue;
      const files = readdirSync(d);
      const bytes = files.reduce((s, f) => s + statSync(join(d, f)).size, 0);
      out.push({ sha256: n, bytes, lastUsed: st.mtimeMs, inUse: inUse(n) || files.some((f) => f.startsWith('.tmp-')) });
    } catch {
      // removed meanwhile
    }
  }
  return out;
}

/** Marks a version used now (its directory's mtime). */
export function touchVersion(dir: string, sha: string, now = new Date()): void {
  try {
    utimesSync(join(dir, sha), now, now);
  } catch {
    // evicted meanwhile: nothing to order
  }
}

/**
 * Evicts the least recently used versions not in use until `dir` fits in `maxBytes` (the policy's
 * plan, carried out). Logs each eviction, and the overflow that versions in use keep.
 */
export function sweepCacheDir(dir: string, maxBytes: number, inUse: (sha: string) => boolean, opts: EvictionOptions = {},
  log?: (line: string) => void): EvictionPlan {
  const plan = planEvictions(readCacheDir(dir, inUse), maxBytes, opts);
  for (const sha of plan.evict) {
    rmSync(join(dir, sha), { recursive: true, force: true });
    log?.(`model ${sha.slice(0, 12)}: evicted from the node's model cache (least recently used, not in use)`);
  }
  if (plan.overBytes > 0) {
    log?.(`model cache holds ${plan.keptBytes} bytes, above its limit ${maxBytes}: the rest is in use by running replicas (or just used)`);
  }
  return plan;
}
