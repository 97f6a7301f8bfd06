/**
 * Start and stop the native tokend daemon (native/build/tokend) as a child
 * process, for the local provider and for tests.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { tiedToParent } from '../gateway/lib/process';

export interface StartTokendOptions {
  /** directory for the sockets (tokend.sock, tokend-control.sock); must exist; keep the path short (< 100 bytes) */
  dir: string;
  /** token window, ms (default 20) */
  windowMs?: number;
  /** number of GPUs tokend manages (default 1; the CPU device always exists) */
  gpus?: number;
  /** CPU device capacity in CPUs per window (default 1) */
  cpuCapacity?: number;
  /** quota of clients no rule matches: guaranteed fraction (default 0) */
  defaultRequest?: number;
  /** quota of clients no rule matches: the most they get (default 1) */
  defaultLimit?: number;
  /** Dilu η_violation: relative KLC growth that means EMERGENCY (default 0.5) */
  etaViolation?: number;
  /** Dilu η_increase: RECOVERY growth per window (default 1.2) */
  etaIncrease?: number;
  /** the window plan: `default` (policy.c) or `dilu` (Dilu's RCKM rule, rckm.c); default: MLFAAS_TOKEND_POLICY, else `default` */
  policy?: 'default' | 'dilu';
  /** tokend binary (default: native/build/tokend under the repository root) */
  binary?: string;
  /** how long to wait for both sockets, ms (default 5000) */
  startTimeoutMs?: number;
  /** pass -v and forward tokend's stderr */
  verbose?: boolean;
}

export interface TokendProcess {
  /** client socket: set MLFAAS_TOKEND_SOCKET / TL_TOKEND_SOCKET of replicas to this */
  socketPath: string;
  /** root-only control socket for {@link createTokendControl} */
  controlPath: string;
  pid: number;
  /** Resolves when the process exits, for whatever reason (see `TokendSupervisor`). */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGTERM, then SIGKILL after 2 s; resolves when the process has exited */
  stop(): Promise<void>;
}

/** native/build/tokend, resolved from this file's place in the repository. */
export function tokendBinaryPath(): string {
  return path.resolve(__dirname, '..', 'native', 'build', 'tokend');
}

function canConnect(p: string, probe?: string): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.createConnection(p);
    const done = (ok: boolean) => { s.destroy(); resolve(ok); };
    s.on('connect', () => {
      if (!probe) return done(true);
      s.write(probe);
    });
    s.on('data', () => done(true));
    s.on('error', () => done(false));
    setTimeout(() => done(false), 500).unref();
  });
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

export async function startTokend(opts: StartTokendOptions): Promise<TokendProcess> {
  const binary = opts.binary ?? tokendBinaryPath();
  if (!existsSync(binary)) throw new Error(`tokend binary ${binary} missing: run npm run build:native`);
  const socketPath = path.join(opts.dir, 'tokend.sock');
  const controlPath = path.join(opts.dir, 'tokend-control.sock');
  if (Buffer.byteLength(controlPath) > 100) throw new RangeError(`dir: socket path ${controlPath} is too long for a unix socket`);
  const args = ['--socket', socketPath, '--control', controlPath, '--window-ms', String(opts.windowMs ?? 20)];
  const num: [string, number | undefined][] = [
    ['--gpus', opts.gpus], ['--cpu-capacity', opts.cpuCapacity], ['--default-request', opts.defaultRequest],
    ['--default-limit', opts.defaultLimit], ['--eta-violation', opts.etaViolation], ['--eta-increase', opts.etaIncrease],
  ];
  for (const [flag, v] of num) if (v !== undefined) args.push(flag, String(v));
  const policy = opts.policy ?? process.env.MLFAAS_TOKEND_POLICY;
  if (policy) args.push('--policy', policy);
  if (opts.verbose) args.push('-v');
  // dies with its parent even on SIGKILL (no orphan daemon holding the sockets), and runs in its
  // own process group: a terminal's Ctrl-C reaches the platform, which stops tokend last
  const argv = tiedToParent([binary, ...args]);
  const child = spawn(argv[0], argv.slice(1), { stdio: ['ignore', 'ignore', opts.verbose ? 'inherit' : 'pipe'], detached: true });
  const exitedP = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve({ code: child.exitCode, signal: child.signalCode });
    else child.once('exit', (code, signal) => resolve({ code, signal }));
  });
  child.once('error', () => undefined);
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (d: string) => { stderr = (stderr + d).slice(-4000); });
  const deadline = Date.now() + (opts.startTimeoutMs ?? 5000);
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`tokend exited with ${child.exitCode ?? child.signalCode}: ${stderr.trim()}`);
    if ((await canConnect(controlPath, '{"op":"STATS"}\n')) && (await canConnect(socketPath))) break;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`tokend did not open ${socketPath} and ${controlPath} in time: ${stderr.trim()}`);
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  return {
    socketPath,
    controlPath,
    pid: child.pid as number,
    exited: exitedP,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const wait = exited(child);
      child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), 2000);
      await wait;
      clearTimeout(t);
    },
  };
}
