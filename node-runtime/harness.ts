import { ChildProcess, spawn } from 'node:child_process';
import { chownSync, existsSync, lstatSync, readdirSync, realpathSync } from 'node:fs';
import { join, relative } from 'node:path';
import { createInterface } from 'node:readline';
import { DefaultLimits, REPO_ROOT } from '../gateway/config';
import { functionBaseEnv, tiedToParent } from '../gateway/lib/process';
import { Cgroups } from './cgroups';
import { imageBinds, platformPath, privateTmpfs, readableImage, SANDBOX_PATH_ENV, SANDBOX_PATHS, SandboxPlan, sandboxArgv } from './sandbox';

/** One JSON line of the ml-training harness (see templates/ml-training/README.md). */
export type HarnessLine = { type: string } & Record<string, unknown>;

/** How a training process is confined (as replicas are: see `sandbox.ts`). */
export interface HarnessSandbox {
  /** The training function's own uid. */
  uid: number;
  cgroups?: Cgroups;
  /** `<dataDir>/datasets`, bound read-only at /var/openfaas/datasets when the job's data is there. */
  datasetsDir: string;
  /** Names the process's cgroup. */
  id: string;
  /** Memory, processes and tmpfs sizes (`MLFAAS_DEFAULT_LIMITS`). */
  limits: DefaultLimits;
}

const inside = (parent: string, p: string) => {
  const r = relative(parent, p);
  return r === '' || (!r.startsWith('..') && !r.startsWith('/'));
};

function chownTree(p: string, uid: number): void {
  const st = lstatSync(p);
  if (!st.isSymbolicLink() && st.uid !== uid) chownSync(p, uid, uid);
  if (st.isDirectory()) for (const e of readdirSync(p)) chownTree(join(p, e), uid);
}

/**
 * The harness's command, working directory and environment in its sandbox: its image read-only
 * at /var/openfaas/function, its checkpoint directory (made its own) writable at
 * /var/openfaas/run, its dataset read-only from the image or the dataset store; paths in the
 * environment rewritten to those.
 */
function confine(dir: string, env: Record<string, string>, sb: HarnessSandbox): { argv: string[]; env: Record<string, string> } {
  const ckpt = env.CHECKPOINT_DIR;
  const binds = imageBinds(dir);
  const out: Record<string, string> = { ...env, NODE_PATH: platformPath(join(REPO_ROOT, 'node_modules')), HOME: SANDBOX_PATHS.run };
  if (ckpt) {
    chownTree(ckpt, sb.uid);
    binds.push({ src: ckpt, dst: SANDBOX_PATHS.run, readOnly: false });
    out.CHECKPOINT_DIR = SANDBOX_PATHS.run;
  }
  if (env.DATASET) {
    // resolveDataset hands over real paths: compare with the real paths of the roots
    const real = (p: string) => (existsSync(p) ? realpathSync(p) : p);
    if (inside(real(dir), env.DATASET)) {
      out.DATASET = join(SANDBOX_PATHS.function, relative(real(dir), env.DATASET));
    } else if (existsSync(sb.datasetsDir) && inside(real(sb.datasetsDir), env.DATASET)) {
      readableImage(sb.datasetsDir);
      binds.push({ src: sb.datasetsDir, dst: SANDBOX_PATHS.datasets, readOnly: true });
      out.DATASET = join(SANDBOX_PATHS.datasets, relative(real(sb.datasetsDir), env.DATASET));
    } else {
      throw new Error(`dataset ${env.DATASET} is neither in the function's image nor in the dataset store`);
    }
  }
  const cgroupProcs = sb.cgroups?.create(sb.id, { memoryBytes: sb.limits.memoryBytes, pids: sb.limits.pids }) ?? [];
  // HOME is the checkpoint directory when the job has one, else a private tmpfs
  const plan: SandboxPlan = { uid: sb.uid, gid: sb.uid, cgroupProcs, binds, tmpfs: privateTmpfs(sb.limits.tmpBytes, !ckpt), cwd: SANDBOX_PATHS.function };
  return { argv: sandboxArgv(plan, [process.execPath, 'index.js']), env: out };
}

/**
 * Starts the ml-training harness (`node index.js`) of an image directory with `env`; every JSON
 * line on stdout goes to `onLine`, other output to `onText`. The process dies with its parent;
 * with `sandbox`, it runs confined as its function's own user.
 */
export function spawnHarness(
  dir: string,
  env: Record<string, string>,
  onLine: (l: HarnessLine) => void,
  onText: (t: string) => void,
  sandbox?: HarnessSandbox,
): ChildProcess {
  const base = { ...functionBaseEnv(!!sandbox, SANDBOX_PATH_ENV), NODE_PATH: join(REPO_ROOT, 'node_modules'), ...env };
  const { argv, env: finalEnv } = sandbox ? confine(dir, base, sandbox) : { argv: tiedToParent([process.execPath, 'index.js']), env: base };
  const child = spawn(argv[0], argv.slice(1), {
    cwd: sandbox ? '/' : dir,
    env: finalEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  if (sandbox?.cgroups) child.once('exit', () => void sandbox.cgroups!.remove(sandbox.id));
  // 'close', not 'exit': a process's last lines may still sit in the pipe when it exits (a busy
  // machine shows it), and its `done` or a profile's second report must not be lost
  closed.set(child, new Promise((r) => child.once('close', (code) => r(code))));
  createInterface({ input: child.stdout! }).on('line', (l) => routeLine(l, onLine, onText));
  createInterface({ input: child.stderr! }).on('line', onText);
  return child;
}

/** A line of the harness's output: a JSON report to `onLine`, anything else to `onText`. */
export function routeLine(l: string, onLine: (l: HarnessLine) => void, onText: (t: string) => void): void {
  if (l.startsWith('{')) {
    try {
      onLine(JSON.parse(l) as HarnessLine);
      return;
    } catch {
      // not a report line
    }
  }
  onText(l);
}

const closed = new WeakMap<ChildProcess, Promise<number | null>>();

/** The exit code of a harness, once it has exited and every line of its output was delivered. */
export function exited(c: ChildProcess): Promise<number | null> {
  const p = closed.get(c);
  if (p) return p;
  if (c.exitCode !== null || c.signalCode !== null) return Promise.resolve(c.exitCode);
  return new Promise((r) => c.once('exit', (code) => r(code)));
}
