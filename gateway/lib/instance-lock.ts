/**
 * An exclusive lock on a file that the kernel releases when its holder dies, however it dies
 * (flock(2), held by a small `flock … cat` child whose stdin is a pipe from us: when we exit,
 * even by SIGKILL, the pipe closes, `cat` ends and the lock goes with it). A lock left by a dead
 * instance is therefore free at once, and a live one cannot be taken or stolen: there is no
 * pid to judge stale, no file to remove.
 */
import { spawn } from 'node:child_process';
import type { Socket } from 'node:net';
import { chmodSync, closeSync, ftruncateSync, openSync, readFileSync, writeSync } from 'node:fs';

/** Another process holds the lock: `pid` is the holder's (0 when it has not written it yet). */
export class AlreadyRunningError extends Error {
  constructor(
    readonly what: string,
    readonly pid: number,
    readonly lockFile: string,
  ) {
    super(`${what} is already running, pid ${pid || 'unknown'} (lock ${lockFile}); stop it first, or use another MLFAAS_DATA_DIR`);
    this.name = 'AlreadyRunningError';
  }
}

export interface InstanceLock {
  readonly file: string;
  /** Releases the lock (idempotent). */
  release(): Promise<void>;
}

/** Exit status `flock` uses for "held by someone else" (EX_TEMPFAIL). */
const CONFLICT = 75;

/**
 * Takes the lock on `file` (created 0600 if missing) or throws {@link AlreadyRunningError}
 * naming the holder's pid, which the holder writes into the file. A refused caller writes
 * nothing. `what` names the locked thing in the error ("mlfaas on /data").
 */
export async function acquireLock(file: string, what: string): Promise<InstanceLock> {
  closeSync(openSync(file, 'a', 0o600)); // 'a': creates, never truncates the holder's pid
  const child = spawn('flock', ['--exclusive', '--nonblock', '--conflict-exit-code', String(CONFLICT), file, 'sh', '-c', 'echo locked; exec cat'], {
    stdio: ['pipe', 'pipe', 'ignore'],
    detached: true, // its own process group: a terminal's Ctrl-C does not free the lock while we stop
  });
  const exited = new Promise<number | null>((res) => {
    child.once('exit', (code) => res(code));
    child.once('error', () => res(-1));
  });
  const locked = await new Promise<boolean>((res) => {
    child.stdout!.once('data', () => res(true));
    void exited.then(() => res(false));
  });
  if (!locked) {
    const code = await exited;
    if (code === CONFLICT) throw new AlreadyRunningError(what, holderPid(file), file);
    throw new Error(`cannot lock ${file}: flock exited with ${code} (is util-linux's flock installed?)`);
  }
  child.stdout!.resume();
  // the lock never keeps the process alive by itself
  child.unref();
  (child.stdin as unknown as Socket).unref();
  (child.stdout as unknown as Socket).unref();
  chmodSync(file, 0o600);
  const fd = openSync(file, 'r+');
  try {
    ftruncateSync(fd, 0);
    writeSync(fd, `${process.pid}\n`, 0);
  } finally {
    closeSync(fd);
  }
  let released: Promise<void> | undefined;
  return {
    file,
    release() {
      released ??= (async () => {
        child.stdin!.end(); // cat sees EOF, flock exits, the kernel drops the lock
        const t = setTimeout(() => child.kill('SIGKILL'), 2000);
        await exited;
        clearTimeout(t);
      })();
      return released;
    },
  };
}

/** The pid a lock's holder wrote, or 0. */
function holderPid(file: string): number {
  try {
    const n = Number(readFileSync(file, 'utf8').trim());
    return Number.isInteger(n) && n > 0 ? n : 0;
  } catch {
    return 0;
  }
}
