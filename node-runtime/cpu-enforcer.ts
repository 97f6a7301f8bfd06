import type { Enforcement, GpuEnforcement } from '../gateway/providers/function-provider';
import { Cgroups } from './cgroups';
import { cfsQuotaUs, cpuShares } from './cpu-values';

/** One replica's CPU allotment: its cores (the spatial share) and a time quota of each (temporal). */
export interface CpuAllotment {
  /** Replica id (names its cgroup). */
  id: string;
  /** Its process (tokend matches clients by pid). */
  pid: number;
  /** Core indices of its cpuset. */
  cores: readonly number[];
  /**
   * Fraction of each of those cores per CFS period, (0, 1]: the request of a <request, limit>
   * quota, what the replica gets under contention.
   */
  quota: number;
  /**
   * The most of each core it may use, [quota, 1], borrowing what idle neighbours leave (Dilu's
   * limit, Kubernetes' `limits.cpu`). Absent: the quota (request = limit, nothing is lent).
   */
  limit?: number;
  /** The function's `limits.cpu`, cores: a cap on top of the quota. */
  limitCores?: number;
}

/**
 * Puts a replica's CPU allotment into effect. The agent and the capability profiler call only
 * this, so a profile is measured under the same mechanism that later enforces the quota.
 */
export interface CpuEnforcer {
  /** What this enforcer makes the kernel (or a voluntary gate) hold. */
  readonly declares: Pick<Enforcement, 'spatial' | 'temporal'>;
  apply(a: CpuAllotment): Promise<void>;
}

/** The allotment's limit: at least its quota, at most 1 (absent: the quota). */
export function limitOfAllotment(a: Pick<CpuAllotment, 'quota' | 'limit'>): number {
  return Math.min(1, Math.max(a.quota, a.limit ?? a.quota));
}

/**
 * The kernel enforces, as Kubernetes does requests and limits: cpuset for the cores, `cpu.shares`
 * ∝ the request (quota × cores; what a busy replica gets under contention) and CFS bandwidth for
 * the limit × cores (what it may borrow from idle neighbours up to).
 */
export function cgroupCpuEnforcer(cgroups: Cgroups): CpuEnforcer {
  return {
    declares: { spatial: cgroups.hasCpuset ? 'cpuset' : 'none', temporal: 'cfs' },
    async apply(a) {
      if (cgroups.hasCpuset) cgroups.setCpuset(a.id, a.cores);
      cgroups.setShares(a.id, cpuShares(a.quota, a.cores.length));
      cgroups.setCfsQuotaUs(a.id, cfsQuotaUs(limitOfAllotment(a), a.cores.length, a.limitCores));
    },
  };
}

/**
 * The fallback where cgroups are not writable: tokend's CPU device (all `nodeCores` cores) is
 * asked to grant the replica quota × its cores. Voluntary: only a runtime that asks tokend for
 * tokens (ml-inference) is held to it, and the cores are not pinned.
 */
export function tokendCpuEnforcer(setShare: (pid: number, share: number, limit: number) => Promise<void>, nodeCores: number): CpuEnforcer {
  return {
    declares: { spatial: 'none', temporal: 'tokend' },
    async apply(a) {
      const fraction = (q: number) => Math.min(1, Math.min(q * a.cores.length, a.limitCores ?? Infinity) / nodeCores);
      // tokend lends idle time between its clients up to each limit (its request/limit policy)
      await setShare(a.pid, fraction(a.quota), fraction(limitOfAllotment(a)));
    },
  };
}

/**
 * The provider's declaration from the enforcer in use and whether memory limits reach a cgroup.
 * The summary says a voluntary fallback loudly: a function can opt out of it.
 */
export function enforcementOf(cpu: CpuEnforcer | undefined, memory: boolean, whyNoCgroups = 'cgroups not writable'): Enforcement {
  const spatial = cpu?.declares.spatial ?? 'none';
  const temporal = cpu?.declares.temporal ?? 'none';
  const mem = memory ? 'cgroup' : 'none';
  const summary =
    temporal === 'cfs'
      ? `kernel-enforced: ${spatial === 'cpuset' ? 'cpuset per replica (spatial)' : 'no cpuset (spatial share not enforced)'}, CFS ` +
          `bandwidth (temporal), memory ${mem}`
      : temporal === 'tokend'
        ? `WARNING: ${whyNoCgroups}; CPU quota falls back to the tokend gate: VOLUNTARY (a function that does not ask tokend for tokens is ` +
            `not limited), no cpuset`
        : `WARNING: nothing enforced (${whyNoCgroups}, no tokend): replicas use any CPU they like`;
  return { spatial, temporal, memory: mem, summary };
}

/** The node's declaration with its GPU replicas' (absent without GPUs): one summary for both. */
export function withGpu(e: Enforcement, gpu: GpuEnforcement | undefined): Enforcement {
  return gpu ? { ...e, gpu, summary: `${e.summary}; ${gpu.summary}` } : e;
}
