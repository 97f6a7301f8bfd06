import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Cgroups } from '../../node-runtime/cgroups';
import { sandboxUnavailable } from '../../node-runtime/sandbox';
import { tokendBinaryPath } from '../../node-runtime/tokend-process';

/**
 * Whether this host lets this process hold a replica to a CPU quota with the kernel, found by
 * trying it here (a cgroup of our own under `mlfaas/`, a CFS quota written and read back), not by
 * asking the platform: an expected value for what the platform says it enforces. The local
 * platform puts replicas in cgroups only inside its sandbox, so no sandbox also means no CFS.
 */
export function hostCanEnforceCfs(root = '/sys/fs/cgroup'): boolean {
  if (sandboxUnavailable()) return false;
  const v1 = existsSync(join(root, 'cpu', 'cpu.cfs_quota_us'));
  const dir = join(root, ...(v1 ? ['cpu', 'mlfaas'] : ['mlfaas']), `probe-${process.pid}`);
  const file = join(dir, v1 ? 'cpu.cfs_quota_us' : 'cpu.max');
  const value = v1 ? '50000' : '50000 100000';
  try {
    mkdirSync(dir, { recursive: true });
    writeFileSync(file, value);
    return readFileSync(file, 'utf8').trim() === value;
  } catch {
    return false;
  } finally {
    try {
      rmdirSync(dir);
    } catch {
      /* never made */
    }
  }
}

/** The CPU mechanism the local platform must declare on this host: the kernel's, else tokend's, else none. */
export function expectedCpuEnforcement(): 'cfs' | 'tokend' | 'none' {
  return hostCanEnforceCfs() ? 'cfs' : existsSync(tokendBinaryPath()) ? 'tokend' : 'none';
}

/**
 * A replica's CFS bandwidth in cores, read from its own cgroup's files (v1 quota and period, v2
 * `cpu.max`): Infinity when unlimited, undefined when it has no group (or this host no cgroups).
 */
export function cfsCoresOf(replicaId: string): number | undefined {
  const f = Cgroups.detect()?.files(replicaId);
  if (!f) return undefined;
  try {
    const [quota, period] = f.period ? [readFileSync(f.quota, 'utf8'), readFileSync(f.period, 'utf8')] : readFileSync(f.quota, 'utf8').trim().split(/\s+/);
    return quota.trim() === 'max' || Number(quota) < 0 ? Infinity : Number(quota) / Number(period);
  } catch {
    return undefined;
  }
}
