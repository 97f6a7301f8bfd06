import type { Enforcement, GpuEnforcement } from '../gateway/providers/function-provider';
import { Cgroups } from './cgroups';
import { cfsQuotaUs } from './cpu-values';

/** One replica's CPU allotment: its cores (the spatial share) and a time quota of each (temporal). */
export interface CpuAllotment {
  /** Replica id (names its cgroup). */
  id: string;
  /** Its process (tokend matches clients by pid). */
  pid: number;
  /** Core indices of its cpuset. */
  cores: readonly number[];
  /** Fraction of each of those cores per CFS period, (0, 1]. */
  quota: number;
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

/** The kernel enforces: cpuset for the cores, CFS bandwidth for quota × cores. */
export function cgroupCpuEnforcer(cgroups: Cgroups): CpuEnforcer {
  return {
    declares: { spatial: cgroups.hasCpuset ? 'cpuset' : 'none', temporal: 'cfs' },
    async apply(a) {
      if (cgroups.hasCpuset) cgroups.setCpuset(a.id, a.cores);
      cgroups.setCfsQuotaUs(a.id, cfsQuotaUs(a.quota, a.cores.length, a.limitCores));
    },
  };
}

/**
 * The fallback where cgroups are not writable: tokend's CPU device (all `nodeCores` cores) is
 * asked to grant the replica quota × its cores. Voluntary: only a runtime that asks tokend for
 * tokens (ml-inference) is held to it, and the cores are not pinned.
 */
export function tokendCpuEnforcer(setShare: (pid: number, share: number) => Promise<void>, nodeCores: number): CpuEnforcer {
  return {
    declares: { spatial: 'none', temporal: 'tokend' },
    async apply(a) {
      const cores = Math.min(a.quota * a.cores.length, a.limitCores ?? Infinity);
      await setShare(a.pid, Math.min(1, cores / nodeCores));
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
