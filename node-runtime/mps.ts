/**
 * The CUDA MPS control daemon, which gives GPU replicas a spatial share (an SM limit per client,
 * `CUDA_MPS_ACTIVE_THREAD_PERCENTAGE`) on top of tokend's temporal quota. The agent starts it on
 * a node with GPUs and `nvidia-cuda-mps-control` on PATH, with its pipe and log directories in
 * `/run/mlfaas/mps-<data dir hash>/`, as the node's GPU uid when functions are sandboxed (an MPS
 * server serves one uid at a time: every GPU replica of the node runs as that uid, see
 * docs/gpu-sharing.md), and stops it with `quit` at shutdown. Without it the SM share is not
 * enforced, and `/system/info` and `enforcement()` say so.
 *
 * Untested without a GPU beyond the command lines (`mpsCommands`, pure) and a stand-in control
 * program in the tests (test/integration/gpu-sm-share.test.ts).
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, chownSync, existsSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

export const MPS_CONTROL = 'nvidia-cuda-mps-control';

export interface MpsDirs {
  /** `CUDA_MPS_PIPE_DIRECTORY`: the control socket clients connect to. */
  pipe: string;
  /** `CUDA_MPS_LOG_DIRECTORY`: control.log and server.log. */
  log: string;
  /**
   * The daemon's `/dev/shm`: the MPS server and its clients share memory through files there, so
   * clients in their own mount namespaces must see the same directory at `/dev/shm` (NVIDIA's
   * k8s-device-plugin and DRA driver mount one such directory into the daemon and every client).
   * Absent: the host's `/dev/shm` (replicas that are not sandboxed).
   */
  shm?: string;
}

/**
 * Not inside the data dir, which is 0700 and reached by a sandboxed replica only through binds: the
 * pipe directory is named by the same path on the host and in a replica. One directory per data
 * dir (a short name: the pipes are unix sockets, whose paths must stay under 108 bytes).
 */
export function mpsDirs(dataDir: string, runRoot = existsSync('/run') ? '/run/mlfaas' : join(tmpdir(), 'mlfaas')): MpsDirs {
  const root = join(runRoot, `mps-${createHash('sha1').update(dataDir).digest('hex').slice(0, 8)}`);
  return { pipe: join(root, 'pipe'), log: join(root, 'log'), shm: join(root, 'shm') };
}

/** One command: argv, its environment additions, and its stdin. */
export interface Command {
  argv: string[];
  env: Record<string, string>;
  input?: string;
}

/**
 * Start (`-d`: daemon mode, forks and returns) and stop (`quit` on stdin: the daemon stops the
 * MPS servers once their clients are gone, then exits). Both name the same directories: the
 * control program finds its daemon through `CUDA_MPS_PIPE_DIRECTORY`.
 */
export function mpsCommands(bin: string, dirs: MpsDirs, ns?: MountNs): { start: Command; stop: Command } {
  const env = { CUDA_MPS_PIPE_DIRECTORY: dirs.pipe, CUDA_MPS_LOG_DIRECTORY: dirs.log };
  const stop = { argv: [bin], env, input: 'quit\n' };
  if (!ns || !dirs.shm) return { start: { argv: [bin, '-d'], env }, stop };
  // root makes a mount namespace where /dev/shm is `dirs.shm`, then drops to the GPU uid for the
  // daemon (it forks and stays in that namespace; so do the servers it starts)
  const drop = ns.runAs ? [ns.setpriv, '--reuid', String(ns.runAs.uid), '--regid', String(ns.runAs.gid), '--clear-groups'] : [];
  return {
    start: {
      argv: [ns.unshare, '--mount', '--propagation', 'private', ns.sh, '-c', `${ns.mount} --bind "$0" /dev/shm && exec "$@"`, dirs.shm, ...drop, bin, '-d'],
      env,
    },
    stop,
  };
}

/** The programs that start the daemon in its own mount namespace (absolute paths: run as root). */
export interface MountNs {
  unshare: string;
  sh: string;
  mount: string;
  setpriv: string;
  runAs?: RunAs;
}

const firstOf = (...paths: string[]): string | undefined => paths.find((p) => existsSync(p));

/** The mount-namespace programs when the platform runs as root and has them; else undefined. */
export function mountNsTools(runAs?: RunAs): MountNs | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const unshare = firstOf('/usr/bin/unshare', '/bin/unshare');
  const sh = firstOf('/bin/sh', '/usr/bin/sh');
  const mount = firstOf('/bin/mount', '/usr/bin/mount');
  const setpriv = firstOf('/usr/bin/setpriv', '/bin/setpriv');
  return unshare && sh && mount && setpriv ? { unshare, sh, mount, setpriv, runAs } : undefined;
}

/** The uid and gid the daemon runs as (absent: the platform's own). */
export interface RunAs {
  uid: number;
  gid: number;
}

function runCommand(c: Command, as?: RunAs): { ok: boolean; why: string } {
  const r = spawnSync(c.argv[0], c.argv.slice(1), {
    env: { ...process.env, ...c.env },
    input: c.input,
    encoding: 'utf8',
    timeout: 10_000,
    ...(as ? { uid: as.uid, gid: as.gid } : {}),
  });
  if (r.error) return { ok: false, why: r.error.message };
  if (r.status !== 0) return { ok: false, why: `${c.argv.join(' ')} exited ${r.status ?? r.signal}: ${(r.stderr || r.stdout || '').trim().slice(0, 200)}` };
  return { ok: true, why: '' };
}

/** A started MPS control daemon. */
export class MpsDaemon {
  private constructor(
    readonly dirs: MpsDirs,
    private readonly cmds: { start: Command; stop: Command },
    readonly runAs?: RunAs,
  ) {}

  /**
   * Starts the daemon, or says why not. `runAs`: the GPU uid every sandboxed GPU replica runs as;
   * the directories are then that uid's alone (0700: no other function's uid reaches the pipes;
   * GPU replicas get the pipe directory bound in). Absent: every replica runs as the platform's
   * own uid (MLFAAS_ISOLATION=off), and the directories are the platform user's, 0755.
   */
  static start(bin: string, dataDir: string, dirs: MpsDirs = mpsDirs(dataDir), runAs?: RunAs): { daemon?: MpsDaemon; why: string } {
    const mode = runAs ? 0o700 : 0o755;
    const runRoot = dirname(dirname(dirs.pipe)); // /run/mlfaas: traversable (the GPU uid reaches its own folder below)
    mkdirSync(runRoot, { recursive: true, mode: 0o755 });
    chmodSync(runRoot, 0o755);
    const ns = runAs ? mountNsTools(runAs) : undefined; // sandboxed replicas need the daemon's /dev/shm bound in
    const use = ns ? dirs : { pipe: dirs.pipe, log: dirs.log };
    for (const d of [dirname(dirs.pipe), dirs.pipe, dirs.log, ...(use.shm ? [use.shm] : [])]) {
      mkdirSync(d, { recursive: true, mode });
      chmodSync(d, mode);
      if (runAs) chownSync(d, runAs.uid, runAs.gid);
    }
    const cmds = mpsCommands(bin, use, ns);
    const r = runCommand(cmds.start, ns ? undefined : runAs); // in a mount namespace, setpriv drops to the uid
    dirs = use;
    return r.ok ? { daemon: new MpsDaemon(dirs, cmds, runAs), why: '' } : { why: r.why };
  }

  /** `echo quit | nvidia-cuda-mps-control`, as the uid that started it. */
  stop(): { ok: boolean; why: string } {
    return runCommand(this.cmds.stop, this.runAs);
  }
}
