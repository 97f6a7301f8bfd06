import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { canMakeDir } from './sandbox';

/** Limits the kernel enforces on one replica's cgroup. */
export interface CgroupLimits {
  /** Memory limit, bytes (`limits.memory`); the kernel OOM-kills the replica above it. */
  memoryBytes?: number;
  /** CPU bandwidth, cores (`limits.cpu`): CFS quota per period. */
  cpuCores?: number;
}

/** Kubernetes quantity → bytes (`512Mi`, `1G`, `1000`). */
export function memoryBytes(q: string): number {
  const m = /^(\d+(?:\.\d+)?)(Ki|Mi|Gi|Ti|k|M|G|T)?$/.exec(q);
  if (!m) throw new Error(`"${q}" is not a memory quantity`);
  const mult: Record<string, number> = { '': 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12, Ki: 1024, Mi: 1024 ** 2, Gi: 1024 ** 3, Ti: 1024 ** 4 };
  return Math.round(Number(m[1]) * mult[m[2] ?? '']);
}

/** Kubernetes CPU quantity → cores (`500m` → 0.5, `2` → 2). */
export function cpuCores(q: string): number {
  return q.endsWith('m') ? Number(q.slice(0, -1)) / 1000 : Number(q);
}

const PERIOD_US = 100_000;
const PRUNE_AFTER_MS = 60_000;

/**
 * One cgroup per replica, under `mlfaas/` of each hierarchy this host lets root write:
 * cgroup v1 (`cpu`, `memory` mounted apart) or v2 (one unified tree with those controllers).
 */
export class Cgroups {
  private constructor(
    readonly version: 1 | 2,
    /** Parent dirs (`…/cpu/mlfaas`, `…/memory/mlfaas`, or the v2 `…/mlfaas`). */
    private readonly parents: { cpu?: string; memory?: string; unified?: string },
  ) {}

  /** What this host offers, or undefined (then replicas run without a cgroup of their own). */
  static detect(root = '/sys/fs/cgroup'): Cgroups | undefined {
    const v1cpu = join(root, 'cpu');
    const v1mem = join(root, 'memory');
    if (existsSync(join(v1cpu, 'cpu.cfs_quota_us'))) {
      const cpu = join(v1cpu, 'mlfaas');
      const memory = join(v1mem, 'mlfaas');
      try {
        mkdirSync(cpu, { recursive: true });
        if (existsSync(join(v1mem, 'memory.limit_in_bytes'))) mkdirSync(memory, { recursive: true });
      } catch {
        return undefined;
      }
      if (!canMakeDir(cpu)) return undefined;
      return new Cgroups(1, { cpu, memory: existsSync(memory) ? memory : undefined }).pruned();
    }
    const controllers = join(root, 'cgroup.controllers');
    if (existsSync(controllers)) {
      const have = readFileSync(controllers, 'utf8').split(/\s+/);
      if (!have.includes('cpu')) return undefined;
      const unified = join(root, 'mlfaas');
      try {
        writeFileSync(join(root, 'cgroup.subtree_control'), `+cpu${have.includes('memory') ? ' +memory' : ''}`);
        mkdirSync(unified, { recursive: true });
        writeFileSync(join(unified, 'cgroup.subtree_control'), `+cpu${have.includes('memory') ? ' +memory' : ''}`);
      } catch {
        return undefined;
      }
      return new Cgroups(2, { unified }).pruned();
    }
    return undefined;
  }

  /**
   * Removes groups left empty by an agent that died (SIGKILL leaves its replicas' groups behind;
   * the replicas themselves died with it). A group that still holds a process is kept.
   */
  private pruned(): this {
    for (const parent of [this.parents.cpu, this.parents.memory, this.parents.unified]) {
      if (!parent) continue;
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

  private dirs(id: string): string[] {
    const p = this.parents;
    return [p.cpu, p.memory, p.unified].filter((d): d is string => !!d).map((d) => join(d, id));
  }

  /** Creates the replica's groups with its limits; returns the `cgroup.procs` files to join. */
  create(id: string, limits: CgroupLimits): string[] {
    const dirs = this.dirs(id);
    for (const d of dirs) mkdirSync(d, { recursive: true });
    this.setCpu(id, limits.cpuCores);
    if (limits.memoryBytes !== undefined) {
      if (this.version === 1 && this.parents.memory) {
        writeFileSync(join(this.parents.memory, id, 'memory.limit_in_bytes'), String(limits.memoryBytes));
      } else if (this.version === 2) {
        writeFileSync(join(this.parents.unified!, id, 'memory.max'), String(limits.memoryBytes));
      }
    }
    return dirs.map((d) => join(d, 'cgroup.procs'));
  }

  /** CFS bandwidth for the replica, in cores; undefined = unlimited. Takes effect at once. */
  setCpu(id: string, cores: number | undefined): void {
    const quota = cores === undefined ? -1 : Math.max(1000, Math.round(cores * PERIOD_US));
    if (this.version === 1) {
      const d = join(this.parents.cpu!, id);
      writeFileSync(join(d, 'cpu.cfs_period_us'), String(PERIOD_US));
      writeFileSync(join(d, 'cpu.cfs_quota_us'), String(quota));
    } else {
      writeFileSync(join(this.parents.unified!, id, 'cpu.max'), `${quota < 0 ? 'max' : quota} ${PERIOD_US}`);
    }
  }

  /** Removes the replica's groups (after its processes exited; retried briefly). */
  async remove(id: string): Promise<void> {
    for (const d of this.dirs(id)) {
      for (let i = 0; i < 20 && existsSync(d); i++) {
        try {
          rmdirSync(d);
        } catch {
          await new Promise((r) => setTimeout(r, 50)); // EBUSY until the last task is reaped
        }
      }
    }
  }
}
