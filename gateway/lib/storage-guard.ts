/**
 * When the disk under the embedded Redis's AOF is (nearly) full, the platform refuses writes
 * before Redis fails one: with `appendfsync always` a failed AOF write makes redis-server exit
 * (it never acknowledges a write it could not persist), so the store would go down on every
 * write instead of answering. Writes are refused with Redis's own switch for that,
 * `min-replicas-to-write 1` (no replica ever connects: every write, scripts included, answers
 * `NOREPLICAS`, which the gateway maps to 503 `storage_full`); reads go on.
 */
import { statfsSync } from 'node:fs';

/** Writes are refused below this much free space on the AOF's filesystem, bytes (8 MiB). */
export const STORAGE_RESERVE_BYTES = 8 * 1024 * 1024;

/** Free bytes (for an unprivileged writer) on the filesystem holding `dir`; undefined if unknown. */
export function freeBytes(dir: string): number | undefined {
  try {
    const s = statfsSync(dir);
    return s.bavail * s.bsize;
  } catch {
    return undefined;
  }
}

/**
 * Whether writes should be refused now (pure). Refusing starts below `reserve` and stops only at
 * twice `reserve`, so a disk hovering at the line does not flap.
 */
export function refuseWrites(free: number | undefined, refusing: boolean, reserve: number): boolean {
  if (free === undefined) return refusing;
  return refusing ? free < 2 * reserve : free < reserve;
}

/** Whether these lines of redis.log say an AOF write failed (full disk, I/O error). */
export function aofWriteFailed(logText: string): boolean {
  return /AOF write error|Short write while writing to the AOF|Error writing to the AOF|No space left on device/i.test(logText);
}
