import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** What the metrics read of node-runtime's `Cgroups` (the replica's own groups, by replica id). */
export interface CgroupReader {
  readonly version: 1 | 2;
  files(id: string): { quota: string };
  usageUs(id: string): number | undefined;
}

/** One replica's CPU time (s) and memory working set (bytes) from its cgroup; a field is absent where the host has no such file. */
export interface ReplicaUsage {
  cpuSeconds?: number;
  memoryBytes?: number;
}

/**
 * The working set as cAdvisor (and so Kubernetes' `container_memory_working_set_bytes`) computes
 * it: usage less the inactive file cache the kernel can drop (never below 0). Pure.
 */
export function workingSetBytes(usage: number, memoryStat: string, version: 1 | 2): number {
  const key = version === 1 ? 'total_inactive_file' : 'inactive_file';
  const line = memoryStat.split('\n').find((l) => l.startsWith(`${key} `));
  const inactive = line ? Number(line.slice(key.length + 1)) : 0;
  return Math.max(0, usage - (Number.isFinite(inactive) ? inactive : 0));
}

/** The replica's memory group: v2 its unified group; v1 `<root>/memory/mlfaas/<id>` beside `<root>/cpu/mlfaas/<id>`. */
function memoryDir(cg: CgroupReader, id: string): string {
  const cpuDir = dirname(cg.files(id).quota);
  return cg.version === 2 ? cpuDir : join(dirname(dirname(dirname(cpuDir))), 'memory', 'mlfaas', id);
}

const readNumber = (f: string) => (existsSync(f) ? Number(readFileSync(f, 'utf8').trim()) : NaN);

/** Reads one replica's usage; undefined when it has no group on this node (another node's replica, or no cgroups). */
export function replicaUsage(cg: CgroupReader, id: string): ReplicaUsage | undefined {
  try {
    const out: ReplicaUsage = {};
    const us = cg.usageUs(id);
    if (us !== undefined && Number.isFinite(us)) out.cpuSeconds = us / 1e6;
    const dir = memoryDir(cg, id);
    const usage = readNumber(join(dir, cg.version === 1 ? 'memory.usage_in_bytes' : 'memory.current'));
    const stat = join(dir, 'memory.stat');
    if (Number.isFinite(usage)) out.memoryBytes = workingSetBytes(usage, existsSync(stat) ? readFileSync(stat, 'utf8') : '', cg.version);
    return out.cpuSeconds === undefined && out.memoryBytes === undefined ? undefined : out;
  } catch {
    return undefined; // the replica's group went away between the list and the read
  }
}
