import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, rmdirSync, statSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { CFS_PERIOD_US, cfsQuotaUs, cpuFiles, cpuMaxLine, cpusetList, cpuShares, cpuWeightFile, parseCpuList, usageUs } from './cpu-values';
import { canMakeDir } from './sandbox';

/** Limits the kernel enforces on one replica's cgroup. */
export interface CgroupLimits {
  /** Memory limit, bytes (`limits.memory`); the kernel OOM-kills the replica above it. */
  memoryBytes?: number;
  /** CPU bandwidth, cores (`limits.cpu`): CFS quota per period. */
  cpuCores?: number;
  /** Most processes and threads the replica may have at once (pids controller). */
  pids?: number;
}

export { cpuCores, memoryBytes } from './cpu-values';

const PRUNE_AFTER_MS = 60_000;

/** Parent dirs (`…/cpu/mlfaas`, … or the v2 `…/mlfaas`) of the hierarchies the platform uses. */
interface Parents {
  cpu?: string;
  memory?: string;
  /** v1 `cpuset` hierarchy: the spatial share. */
  cpuset?: string;
  /** v1 `cpuacct` hierarchy (apart from `cpu` on some hosts): CPU time used, for measurement. */
  cpuacct?: string;
  /** v1 `pids` hierarchy: the process count limit (a fork bomb stays inside its replica). */
  pids?: string;
  unified?: string;
}

const read = (f: string) => readFileSync(f, 'utf8').trim();

/** Makes `dir` and, for a v1 cpuset group, fills its cpus/mems from the parent (empty ones refuse tasks). */
function makeCpusetDir(dir: string, parent: string): void {
  mkdirSync(dir, { recursive: true });
  for (const f of ['cpuset.mems', 'cpuset.cpus']) {
    const own = join(dir, f);
    if (!existsSync(own) || read(own) === '') writeFileSync(own, read(join(parent, f)));
  }
}

/**
 * One cgroup per replica, under `mlfaas/` of each hierarchy this host lets root write:
 * cgroup v1 (`cpu`, `cpuset`, `cpuacct`, `memory` mounted apart) or v2 (one unified tree with
 * those controllers). The CPU dimensions are the spatial share (`cpuset.cpus`) and the temporal
 * quota (CFS bandwidth); both change live, the replica keeps running.
 */
export class Cgroups {
  private constructor(
    readonly version: 1 | 2,
    private readonly parents: Parents,
    /** The cores this node lets the platform use (the root cpuset). */
    readonly nodeCores: number[],
  ) {}

  /** What this host offers, or undefined (then replicas run without a cgroup of their own). */
  static detect(root = '/sys/fs/cgroup'): Cgroups | undefined {
    const v1cpu = join(root, 'cpu');
    if (existsSync(join(v1cpu, 'cpu.cfs_quota_us'))) return Cgroups.detectV1(root);
    const controllers = join(root, 'cgroup.controllers');
    if (existsSync(controllers)) {
      const have = readFileSync(controllers, 'utf8').split(/\s+/);
      if (!have.includes('cpu')) return undefined;
      const want = ['cpu', 'cpuset', 'memory', 'pids'].filter((c) => have.includes(c)).map((c) => `+${c}`).join(' ');
      const unified = join(root, 'mlfaas');
      try {
        writeFileSync(join(root, 'cgroup.subtree_control'), want);
        mkdirSync(unified, { recursive: true });
        writeFileSync(join(unified, 'cgroup.subtree_control'), want);
      } catch {
        return undefined;
      }
      const eff = [join(root, 'cpuset.cpus.effective'), join(root, 'cpuset.cpus')].find((f) => existsSync(f) && read(f));
      return new Cgroups(2, { unified }, nodeCoresFrom(eff)).pruned().weighted();
    }
    return undefined;
  }

  private static detectV1(root: string): Cgroups | undefined {
    const at = (h: string) => join(root, h);
    const parents: Parents = { cpu: join(at('cpu'), 'mlfaas') };
    try {
      mkdirSync(parents.cpu!, { recursive: true });
      if (existsSync(join(at('memory'), 'memory.limit_in_bytes'))) mkdirSync((parents.memory = join(at('memory'), 'mlfaas')), { recursive: true });
    } catch {
      return undefined;
    }
    if (!canMakeDir(parents.cpu!)) return undefined;
    // optional hierarchies: without them the replica still has its CFS quota
    try {
      if (existsSync(join(at('cpuset'), 'cpuset.cpus'))) makeCpusetDir((parents.cpuset = join(at('cpuset'), 'mlfaas')), at('cpuset'));
    } catch {
      parents.cpuset = undefined;
    }
    try {
      if (existsSync(join(at('pids'), 'cgroup.procs'))) mkdirSync((parents.pids = join(at('pids'), 'mlfaas')), { recursive: true });
    } catch {
      parents.pids = undefined;
    }
    try {
      const acct = at('cpuacct');
      if (existsSync(join(acct, 'cpuacct.usage')) && realpathSync(acct) !== realpathSync(at('cpu')))
        mkdirSync((parents.cpuacct = join(acct, 'mlfaas')), { recursive: true });
    } catch {
      parents.cpuacct = undefined;
    }
    const eff = parents.cpuset ? join(at('cpuset'), 'cpuset.cpus') : undefined;
    return new Cgroups(1, parents, nodeCoresFrom(eff)).pruned().weighted();
  }

  /** Whether replicas get a cpuset (the spatial share) on this host. */
  get hasCpuset(): boolean {
    return this.version === 1 ? !!this.parents.cpuset : true;
  }

  /** Whether a process-count limit reaches a pids cgroup on this host. */
  get hasPids(): boolean {
    return this.version === 1 ? !!this.parents.pids : existsSync(join(this.parents.unified!, 'pids.max'));
  }

  /** Whether `limits.memory` reaches a memory cgroup on this host. */
  get hasMemory(): boolean {
    return this.version === 1 ? !!this.parents.memory : existsSync(join(this.parents.unified!, 'memory.max'));
  }

  /**
   * Removes groups left empty by an agent that died (SIGKILL leaves its replicas' groups behind;
   * the replicas themselves died with it). A group that still holds a process is kept.
   */
  private pruned(): this {
    for (const parent of this.parentDirs()) {
      for (const e of readdirSync(parent, { withFileTypes: true })) {
        if (!e.isDirectory()) continue;
        try {
          const d = join(parent, e.name);
          // a group made in the last minute may be a live agent's, about to receive its process
          if (Date.now() - statSync(d).mtimeMs < PRUNE_AFTER_MS) continue;
          if (readFileSync(join(d, 'cgroup.procs'), 'utf8').trim() === '') rmdirSync(d);
        } catch {
          // busy or gone: leave it
        }
      }
    }
    return this;
  }

  /**
   * The replicas' parent group weighs as much as the node's cores requested in full (1024 per core,
   * as Kubernetes weighs `kubepods`): against the host's own processes the replicas' requests hold.
   */
  private weighted(): this {
    const w = cpuWeightFile(this.version, cpuShares(1, this.nodeCores.length));
    try {
      writeFileSync(join(this.parents.cpu ?? this.parents.unified!, w.file), w.value);
    } catch {
      // not writable here: the group keeps the kernel's default weight
    }
    return this;
  }

  private parentDirs(): string[] {
    const p = this.parents;
    // cpu first: callers (and tests) take the first procs file as the CPU group
    return [p.cpu, p.cpuset, p.cpuacct, p.memory, p.pids, p.unified].filter((d): d is string => !!d);
  }

  private dirs(id: string): string[] {
    return this.parentDirs().map((d) => join(d, id));
  }

  /** The files holding a replica's CPU dimensions and usage (read back by tests and tools). */
  files(id: string): { quota: string; period?: string; cpus?: string; usage?: string } {
    const f = cpuFiles(this.version);
    const p = this.parents;
    if (this.version === 2) {
      const d = join(p.unified!, id);
      return { quota: join(d, f.quota), cpus: join(d, f.cpus), usage: join(d, f.usage) };
    }
    const d = join(p.cpu!, id);
    return {
      quota: join(d, f.quota),
      period: join(d, f.period!),
      cpus: p.cpuset ? join(p.cpuset, id, f.cpus) : undefined,
      usage: p.cpuacct ? join(p.cpuacct, id, f.usage) : undefined,
    };
  }

  /**
   * Creates the replica's groups with its limits and every core of the node (the autoscaler
   * narrows the cpuset once it places the replica); returns the `cgroup.procs` files to join.
   */
  create(id: string, limits: CgroupLimits): string[] {
    const p = this.parents;
    for (const d of this.dirs(id)) {
      if (p.cpuset && d.startsWith(p.cpuset + '/')) makeCpusetDir(d, p.cpuset);
      else mkdirSync(d, { recursive: true });
    }
    if (this.hasCpuset) this.setCpuset(id, this.nodeCores);
    // quota 1 of every core until the agent applies the replica's allotment, capped by limits.cpu
    this.setCfsQuotaUs(id, limits.cpuCores === undefined ? undefined : cfsQuotaUs(1, this.nodeCores.length, limits.cpuCores));
    if (limits.memoryBytes !== undefined) {
      if (this.version === 1 && p.memory) {
        writeFileSync(join(p.memory, id, 'memory.limit_in_bytes'), String(limits.memoryBytes));
      } else if (this.version === 2) {
        writeFileSync(join(p.unified!, id, 'memory.max'), String(limits.memoryBytes));
      }
    }
    if (limits.pids !== undefined) {
      const f = this.version === 1 ? (p.pids ? join(p.pids, id, 'pids.max') : undefined) : join(p.unified!, id, 'pids.max');
      if (f && existsSync(f)) writeFileSync(f, String(limits.pids));
    }
    return this.dirs(id).map((d) => join(d, 'cgroup.procs'));
  }

  /** CFS quota per period, µs; undefined = unlimited. */
  setCfsQuotaUs(id: string, quotaUs: number | undefined): void {
    const f = this.files(id);
    if (this.version === 1) {
      writeFileSync(f.period!, String(CFS_PERIOD_US));
      writeFileSync(f.quota, String(quotaUs ?? -1));
    } else {
      writeFileSync(f.quota, cpuMaxLine(quotaUs));
    }
  }

  /** The request half of a <request, limit> quota: v1 `cpu.shares` (v2: the equivalent `cpu.weight`). */
  setShares(id: string, shares: number): void {
    const w = cpuWeightFile(this.version, shares);
    writeFileSync(join(this.parents.cpu ?? this.parents.unified!, id, w.file), w.value);
  }

  /** The replica's cpuset (its spatial share), changed live; the kernel migrates its threads. */
  setCpuset(id: string, cores: readonly number[]): void {
    const file = this.files(id).cpus;
    if (!file) throw new Error('no cpuset hierarchy on this host');
    writeFileSync(file, cpusetList(cores));
  }

  /** CPU time the replica's group used so far, µs (undefined: no accounting on this host). */
  usageUs(id: string): number | undefined {
    const file = this.files(id).usage;
    return file && existsSync(file) ? usageUs(this.version, readFileSync(file, 'utf8')) : undefined;
  }

  /**
   * Removes the replica's groups once its main process exited. Whatever it left running in them
   * (a classic watchdog's forked requests, a daemonised child) is SIGKILLed first: a stopped
   * replica must not keep using the CPU, and a busy group cannot be removed.
   */
  async remove(id: string): Promise<void> {
    for (let i = 0; i < 40 && this.dirs(id).some((d) => existsSync(d)); i++) {
      this.killAll(id);
      for (const d of this.dirs(id)) {
        try {
          if (existsSync(d)) rmdirSync(d);
        } catch {
          // EBUSY until the last task is reaped
        }
      }
      if (this.dirs(id).some((d) => existsSync(d))) await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** SIGKILLs every process still in the replica's groups. */
  private killAll(id: string): void {
    for (const d of this.dirs(id)) {
      let pids: number[] = [];
      try {
        pids = readFileSync(join(d, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean).map(Number);
      } catch {
        continue; // gone
      }
      for (const pid of pids) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }
    }
  }
}

/** The node's usable cores from a root cpuset file, or every core the OS reports. */
function nodeCoresFrom(file: string | undefined): number[] {
  try {
    const cores = file ? parseCpuList(read(file)) : [];
    if (cores.length) return cores;
  } catch {
    // fall through
  }
  return cpus().map((_, i) => i);
}
