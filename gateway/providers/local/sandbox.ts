import { accessSync, chmodSync, constants, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, rmdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { REPO_ROOT } from '../../config';

/**
 * Where a sandboxed function process sees things (OpenFaaS's paths where OpenFaaS has one):
 * its image read-only, its own secrets read-only at `/var/openfaas/secrets/<name>`, a private
 * writable run directory (its socket, HOME), and the platform's code read-only (the runtime's
 * node_modules, the classic watchdog).
 */
export const SANDBOX_PATHS = {
  function: '/var/openfaas/function',
  secrets: '/var/openfaas/secrets',
  run: '/var/openfaas/run',
  platform: '/var/openfaas/platform',
  tokend: '/var/openfaas/tokend',
  datasets: '/var/openfaas/datasets',
} as const;

export interface BindMount {
  src: string;
  dst: string;
  readOnly: boolean;
}

/** How one function process is confined. */
export interface SandboxPlan {
  /** Unprivileged uid/gid the process runs as (no supplementary groups, no capabilities). */
  uid: number;
  gid: number;
  /** `cgroup.procs` files the process is moved into before it runs any function code. */
  cgroupProcs: string[];
  binds: BindMount[];
  /** Working directory inside the sandbox. */
  cwd: string;
  /**
   * `LD_PRELOAD` for the function process only (the GPU limiter): set at the last step, once the
   * binds that make its path exist are in place, so the wrapper steps before do not warn.
   */
  preload?: string;
}

/** Where a file of the platform (under the repository root) is seen inside a sandbox. */
export const platformPath = (hostPath: string) => join(SANDBOX_PATHS.platform, relative(REPO_ROOT, hostPath));

/**
 * The binds every function process has: the platform's code read-only (its runtime's
 * node_modules, the classic watchdog) and its image read-only, made readable by its user.
 */
export function imageBinds(imageDir: string | undefined): BindMount[] {
  const binds: BindMount[] = [{ src: REPO_ROOT, dst: SANDBOX_PATHS.platform, readOnly: true }];
  if (imageDir) {
    readableImage(imageDir);
    binds.push({ src: imageDir, dst: SANDBOX_PATHS.function, readOnly: true });
  }
  return binds;
}

const sh = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/**
 * `argv` wrapped so that, before the function's first instruction, the process is in a private
 * mount namespace (only the plan's binds are added), in its cgroups, and runs as the plan's
 * unprivileged user with `no_new_privs` (no setuid escalation) and PR_SET_PDEATHSIG (it dies
 * with the agent). unshare → sh → setpriv → argv are successive execs of one process, so the
 * pid the agent holds is the function's. Pure: builds the command line only.
 */
export function sandboxArgv(plan: SandboxPlan, argv: string[]): string[] {
  const lines = ['set -e'];
  for (const procs of plan.cgroupProcs) lines.push(`echo $$ > ${sh(procs)}`);
  for (const b of plan.binds) {
    lines.push(`mount --bind ${b.readOnly ? '-o ro ' : ''}${sh(b.src)} ${sh(b.dst)}`);
  }
  lines.push(`cd ${sh(plan.cwd)}`);
  if (plan.preload) lines.push(`export LD_PRELOAD=${sh(plan.preload)}`);
  lines.push(
    `exec /usr/bin/setpriv --reuid ${plan.uid} --regid ${plan.gid} --clear-groups --no-new-privs --pdeathsig KILL -- "$@"`,
  );
  return ['/usr/bin/unshare', '--mount', '--propagation', 'private', '--', '/bin/sh', '-c', lines.join('\n'), 'mlfaas-sandbox', ...argv];
}

/** Why this host cannot sandbox function processes, or undefined when it can. */
export function sandboxUnavailable(): string | undefined {
  if (process.platform !== 'linux') return 'not Linux';
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return 'the agent is not root';
  for (const bin of ['/usr/bin/unshare', '/usr/bin/setpriv', '/bin/sh']) {
    if (!existsSync(bin)) return `${bin} is missing`;
  }
  try {
    for (const p of Object.values(SANDBOX_PATHS)) mkdirSync(p, { recursive: true, mode: 0o755 });
    accessSync(SANDBOX_PATHS.function, constants.W_OK);
  } catch (e) {
    return `cannot create the sandbox mount points under /var/openfaas: ${(e as Error).message}`;
  }
  return undefined;
}

/** Creates and removes a scratch directory to check a path is writable by root (cgroup roots). */
export function canMakeDir(parent: string): boolean {
  try {
    const d = mkdtempSync(join(parent, 'probe-'));
    rmdirSync(d);
    return true;
  } catch {
    return false;
  }
}

const opened = new Set<string>();

/**
 * Makes an image readable by the unprivileged user its replicas run as (an image built from a
 * temp dir may be 0700). Only reachable through the replica's bind mount: the data dir around
 * it stays 0700, so no other function can get at it by path. Once per directory.
 */
export function readableImage(dir: string): void {
  if (opened.has(dir)) return;
  const walk = (p: string) => {
    const st = lstatSync(p);
    if (st.isSymbolicLink()) return;
    if (st.isDirectory()) {
      if ((st.mode & 0o005) !== 0o005) chmodSync(p, st.mode | 0o005);
      for (const e of readdirSync(p)) walk(join(p, e));
    } else if ((st.mode & 0o004) === 0) {
      chmodSync(p, st.mode | 0o004);
    }
  };
  walk(dir);
  opened.add(dir);
}
