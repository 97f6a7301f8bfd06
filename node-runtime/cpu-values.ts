/**
 * Pure conversions between the autoscaler's CPU model (a device per core, a time quota in (0, 1]
 * of it) and what the kernel reads (a cpuset list, CFS bandwidth). No I/O: `cgroups.ts` writes
 * the results, unit tests check them against a fake cgroup root.
 */
import { memoryQuantityBytes } from '../gateway/lib/quantity';

/** Kubernetes quantity → bytes (`512Mi`, `1G`, `1000`); throws on anything else. */
export function memoryBytes(q: string): number {
  const b = memoryQuantityBytes(q);
  if (b === undefined) throw new Error(`"${q}" is not a memory quantity`);
  return b;
}

/** Kubernetes CPU quantity → cores (`500m` → 0.5, `2` → 2). */
export function cpuCores(q: string): number {
  return q.endsWith('m') ? Number(q.slice(0, -1)) / 1000 : Number(q);
}

/**
 * The CFS period the platform uses, µs: the kernel's default 100 ms. A replica at quota q that has
 * used its share waits up to (1 − q) × period, so a shorter period bounds the stall (18 ms at 20 ms
 * and q 0.1), but it also shrinks the burst a replica may run at full speed to q × period (2 ms):
 * an HTTP request through the Node runtime needs more than that, so nearly every request was
 * throttled. Measured (bench:live, 90 s of Dilu bursty + periodic, static-share at q 0.1 for digits):
 * SLO misses 147 of 8,650 at 20 ms against 5 at 100 ms; image-classify 86 of 285 against 16.
 */
export const CFS_PERIOD_US = 100_000;
/** The kernel refuses a CFS quota under 1 ms. */
const MIN_QUOTA_US = 1000;

/**
 * CFS quota, µs per period: `quota` of each of `cores` cores, capped by the function's
 * `limits.cpu` (cores) when it has one. Never below the kernel's 1 ms minimum.
 */
export function cfsQuotaUs(quota: number, cores: number, limitCores?: number, periodUs = CFS_PERIOD_US): number {
  if (!(quota > 0 && quota <= 1)) throw new Error(`quota ${quota} must be in (0, 1]`);
  if (!(cores >= 1)) throw new Error(`cores ${cores} must be at least 1`);
  const bandwidth = limitCores !== undefined && limitCores > 0 ? Math.min(quota * cores, limitCores) : quota * cores;
  return Math.max(MIN_QUOTA_US, Math.round(bandwidth * periodUs));
}

/** cgroup v1 `cpu.shares` per core of request: the kernel's default weight of one nice-0 task. */
export const SHARES_PER_CORE = 1024;

/**
 * The request half of a <request, limit> quota as a CFS weight (cgroup v1 `cpu.shares`), exactly
 * Kubernetes' `requests.cpu`: 1024 per core requested, at least the kernel's minimum 2. Under
 * contention the kernel splits a core in proportion to these weights, so each busy replica gets at
 * least its request as long as the requests on the core sum to at most 1; the limit (CFS quota)
 * caps what an idle neighbour lends it.
 */
export function cpuShares(request: number, cores: number): number {
  if (!(request > 0 && request <= 1)) throw new Error(`request ${request} must be in (0, 1]`);
  return Math.max(2, Math.round(request * cores * SHARES_PER_CORE));
}

/** v1 shares → v2 `cpu.weight` (1..10000), the mapping Kubernetes and runc use. */
export function cpuWeightOfShares(shares: number): number {
  return Math.min(10000, Math.max(1, 1 + Math.floor(((shares - 2) * 9999) / 262142)));
}

/** The v2 `cpu.max` line for a quota (undefined = unlimited). */
export function cpuMaxLine(quotaUs: number | undefined, periodUs = CFS_PERIOD_US): string {
  return `${quotaUs === undefined || quotaUs < 0 ? 'max' : quotaUs} ${periodUs}`;
}

/** Core indices → the kernel's cpu list syntax: `[0, 1, 2, 5]` → `0-2,5`. */
export function cpusetList(cores: readonly number[]): string {
  const sorted = [...new Set(cores)].sort((a, b) => a - b);
  if (!sorted.length) throw new Error('a cpuset needs at least one core');
  if (sorted.some((c) => !Number.isInteger(c) || c < 0)) throw new Error(`bad core index in ${cores.join(',')}`);
  const parts: string[] = [];
  for (let i = 0; i < sorted.length; ) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j] + 1) j++;
    parts.push(i === j ? String(sorted[i]) : `${sorted[i]}-${sorted[j]}`);
    i = j + 1;
  }
  return parts.join(',');
}

/** The kernel's cpu list syntax → core indices (`0-2,5` → `[0, 1, 2, 5]`; empty → `[]`). */
export function parseCpuList(s: string): number[] {
  const out: number[] = [];
  for (const part of s.trim().split(',')) {
    if (!part) continue;
    const [a, b] = part.split('-').map(Number);
    if (!Number.isInteger(a) || (b !== undefined && !Number.isInteger(b))) throw new Error(`"${s}" is not a cpu list`);
    for (let c = a; c <= (b ?? a); c++) out.push(c);
  }
  return out;
}

/**
 * The cores of an autoscaler device on this node: `cpuN` is core N (when the node has it);
 * anything else (no placement yet, a GPU name, a planned `new…` device) is every core.
 */
export function coresOfDevice(device: string | undefined, nodeCores: readonly number[]): number[] {
  const m = device ? /^cpu(\d+)$/.exec(device) : null;
  if (m && nodeCores.includes(Number(m[1]))) return [Number(m[1])];
  return [...nodeCores];
}

/** The files a cgroup version uses for the two CPU dimensions and for usage accounting. */
export function cpuFiles(version: 1 | 2): { quota: string; period?: string; cpus: string; mems: string; usage: string } {
  return version === 1
    ? { quota: 'cpu.cfs_quota_us', period: 'cpu.cfs_period_us', cpus: 'cpuset.cpus', mems: 'cpuset.mems', usage: 'cpuacct.usage' }
    : { quota: 'cpu.max', cpus: 'cpuset.cpus', mems: 'cpuset.mems', usage: 'cpu.stat' };
}

/** The file of a group's CFS weight (the request) and its value for `shares`: v1 `cpu.shares`, v2 `cpu.weight`. */
export function cpuWeightFile(version: 1 | 2, shares: number): { file: string; value: string } {
  return version === 1 ? { file: 'cpu.shares', value: String(shares) } : { file: 'cpu.weight', value: String(cpuWeightOfShares(shares)) };
}

/** CPU time used, µs, from a usage file's text: v1 `cpuacct.usage` (ns) or v2 `cpu.stat` (usage_usec). */
export function usageUs(version: 1 | 2, text: string): number {
  if (version === 1) return Number(text.trim()) / 1000;
  const m = /^usage_usec (\d+)$/m.exec(text);
  if (!m) throw new Error('cpu.stat has no usage_usec');
  return Number(m[1]);
}
