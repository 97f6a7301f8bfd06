import { accessSync, chmodSync, constants, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmdirSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { REPO_ROOT } from '../gateway/config';
import type { VethPlan } from './egress';

/**
 * Where a sandboxed function process sees things (OpenFaaS's paths where OpenFaaS has one):
 * its image read-only, its own secrets read-only at `/var/openfaas/secrets/<name>`, a private
 * writable run directory (a tmpfs: its HOME, its socket), and the platform's runtime files
 * read-only (node_modules, the classic watchdog, the native build).
 */
export const SANDBOX_PATHS = {
  function: '/var/openfaas/function',
  secrets: '/var/openfaas/secrets',
  run: '/var/openfaas/run',
  platform: '/var/openfaas/platform',
  tokend: '/var/openfaas/tokend',
  datasets: '/var/openfaas/datasets',
} as const;

/** The native sandbox (`native/sandbox/sandbox.c`), built by `npm run setup`. */
export const SANDBOX_BIN = join(REPO_ROOT, 'native', 'build', 'mlfaas-sandbox');

/**
 * The host's system directories a function sees read-only at the same path (its "base image":
 * the shell, libc, node, python and their libraries). Nothing else of the host is visible:
 * not the data dir, not /root, /home, /tmp, /run, /var, the operator's working directory.
 */
export const SYSTEM_PATHS = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32', '/etc', '/opt'];

/** The platform's files a function process needs (its runtime), under the repository root. */
export const PLATFORM_FILES = ['node_modules', join('native', 'build'), join('gateway', 'providers', 'local', 'classic-watchdog.ts')];

/** PATH inside a sandbox (the function's envVars may set its own: it reaches only the function). */
export const SANDBOX_PATH_ENV = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** The port a sandboxed replica listens on, inside its own network namespace (OpenFaaS's). */
export const SANDBOX_PORT = 8080;

export interface BindMount {
  src: string;
  dst: string;
  readOnly: boolean;
}

/** A private tmpfs of the sandbox; `owned`: owned by the function's user (mode 0700), else 1777. */
export interface TmpfsMount {
  dst: string;
  bytes: number;
  owned: boolean;
}

/** How one function process is confined. */
export interface SandboxPlan {
  /** Unprivileged uid/gid the process runs as (no supplementary groups, no capabilities). */
  uid: number;
  gid: number;
  /** `cgroup.procs` files the process is moved into before it runs any function code. */
  cgroupProcs: string[];
  binds: BindMount[];
  /** Private tmpfs mounts (size-limited; their pages count against the memory cgroup). */
  tmpfs: TmpfsMount[];
  /** Host device nodes the function may open (a GPU's `/dev/nvidia*`). */
  devices?: string[];
  /** Working directory inside the sandbox. */
  cwd: string;
  /**
   * `LD_PRELOAD` for the function process only (the GPU limiter): set at the last step, once the
   * binds that make its path exist are in place, so the wrapper steps before do not warn.
   */
  preload?: string;
  /**
   * The gateway's way in: a unix socket on the host (root-only) whose connections the sandbox
   * relays to the function inside its network namespace (`unix` first, else 127.0.0.1:`port`).
   */
  listen?: { socket: string; port: number; unix?: string };
  hostname?: string;
  /** Egress beyond loopback: a veth pair on the host's side of the firewall (`egress.ts`). */
  veth?: VethPlan;
}

/** Where a file of the platform (under the repository root) is seen inside a sandbox. */
export const platformPath = (hostPath: string) => join(SANDBOX_PATHS.platform, relative(REPO_ROOT, hostPath));

/**
 * The binds every function process has: the platform's runtime files read-only (not the rest
 * of the repository: an operator's log or data dir may be there) and its image read-only, made
 * readable by its user.
 */
export function imageBinds(imageDir: string | undefined): BindMount[] {
  const binds: BindMount[] = PLATFORM_FILES.map((f) => join(REPO_ROOT, f))
    .filter((f) => existsSync(f))
    .map((src) => ({ src, dst: platformPath(src), readOnly: true }));
  if (imageDir) {
    readableImage(imageDir);
    binds.push({ src: imageDir, dst: SANDBOX_PATHS.function, readOnly: true });
  }
  return binds;
}

/** The private tmpfs every sandbox has: /tmp, /var/tmp, /dev/shm, and (for a replica) its HOME. */
export function privateTmpfs(bytes: number, home: boolean): TmpfsMount[] {
  const out: TmpfsMount[] = ['/tmp', '/var/tmp', '/dev/shm'].map((dst) => ({ dst, bytes, owned: false }));
  if (home) out.push({ dst: SANDBOX_PATHS.run, bytes, owned: true });
  return out;
}

/** Where node lives when it is not under a system path (nvm, a tarball): its prefix, read-only. */
function nodePrefix(): string[] {
  const exe = process.execPath;
  if (SYSTEM_PATHS.some((p) => exe.startsWith(p + '/'))) return [];
  return [dirname(dirname(exe))];
}

/**
 * The native sandbox's command line for `argv` (see `native/sandbox/sandbox.c`): in its cgroups
 * before anything runs; own mount, pid, network, UTS and IPC namespaces; a new root holding only
 * the system paths, the plan's binds, a private /proc and /dev, and the plan's tmpfs; loopback
 * only; the plan's unprivileged user with `no_new_privs`; killed with every descendant when the
 * agent dies. No shell and no PATH lookup run as root. Pure: builds the command line only.
 */
export function sandboxArgv(plan: SandboxPlan, argv: string[]): string[] {
  const out = [SANDBOX_BIN, '--uid', String(plan.uid), '--gid', String(plan.gid)];
  for (const f of plan.cgroupProcs) out.push('--cgroup', f);
  for (const p of [...SYSTEM_PATHS, ...nodePrefix()]) out.push('--system', p);
  for (const d of plan.devices ?? []) out.push('--dev', d);
  for (const t of plan.tmpfs) out.push('--tmpfs', t.dst, String(t.bytes), t.owned ? '700' : '1777', t.owned ? '1' : '0');
  for (const b of plan.binds) out.push(b.readOnly ? '--ro-bind' : '--bind', b.src, b.dst);
  if (plan.listen) {
    out.push('--listen', plan.listen.socket, '--target-port', String(plan.listen.port));
    if (plan.listen.unix) out.push('--target-unix', plan.listen.unix);
  }
  if (plan.hostname) out.push('--hostname', plan.hostname);
  if (plan.veth) out.push('--veth', plan.veth.hostIf, plan.veth.hostIp, plan.veth.nsIp, String(plan.veth.prefix));
  out.push('--chdir', plan.cwd);
  if (plan.preload) out.push('--preload', plan.preload);
  return [...out, '--', ...argv];
}

/** Why this host cannot sandbox function processes, or undefined when it can. */
export function sandboxUnavailable(): string | undefined {
  if (process.platform !== 'linux') return 'not Linux';
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return 'the agent is not root';
  if (!existsSync(SANDBOX_BIN)) return `${SANDBOX_BIN} is not built (npm run setup builds it)`;
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

/** The host's NVIDIA device nodes (`/dev/nvidia0`, `nvidiactl`, `nvidia-uvm`, …), for a GPU replica. */
export function gpuDevices(): string[] {
  try {
    return readdirSync('/dev')
      .filter((n) => n.startsWith('nvidia') && n !== 'nvidia-caps')
      .map((n) => join('/dev', n));
  } catch {
    return [];
  }
}

const childrenOf = (pid: number): number[] => {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').split(' ').filter(Boolean).map(Number);
  } catch {
    return [];
  }
};

/**
 * The host pid of the function a sandbox runs: the sandbox's outer process (`outer`) forks the
 * namespace's init, which forks the function first, as pid 2 of the namespace (NSpid).
 */
export function sandboxedFunctionPid(outer: number): number | undefined {
  for (const init of childrenOf(outer)) {
    for (const pid of childrenOf(init)) {
      try {
        const ns = /^NSpid:\s+(.*)$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1].trim().split(/\s+/);
        if (ns && ns[ns.length - 1] === '2') return pid;
      } catch {
        // gone
      }
    }
  }
  return undefined;
}
