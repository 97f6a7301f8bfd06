import { spawn, ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import Redis from 'ioredis';
import { isAlive, tiedToParent } from './process';

/** A `redis-server` child with data and AOF under `dir`, listening on a unix socket (and optionally a port). */
export interface EmbeddedRedis {
  /** Connection target for `connectRedis`: the unix socket path. */
  url: string;
  socketPath: string;
  pid: number;
  stop(): Promise<void>;
}

export interface EmbeddedRedisOptions {
  dir: string;
  /** Also listen on this TCP port on 127.0.0.1 (0 = unix socket only). */
  port?: number;
  /** Fsync policy for the AOF: `always` loses nothing on a machine crash; `everysec` ≤ 1 s. */
  appendfsync?: 'always' | 'everysec';
}

async function ping(url: string, timeoutMs: number): Promise<boolean> {
  const r = connectRedis(url, { lazyConnect: true, maxRetriesPerRequest: 0, connectTimeout: timeoutMs, retryStrategy: () => null });
  r.on('error', () => undefined);
  try {
    await r.connect();
    return (await r.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    r.disconnect();
  }
}

/**
 * Starts redis-server. A server left by an earlier run that was killed (its pid file still
 * names a live process) is shut down first with SHUTDOWN, which writes its AOF; the new server
 * loads it, so nothing that was accepted is lost.
 */
export async function startEmbeddedRedis(opts: EmbeddedRedisOptions): Promise<EmbeddedRedis> {
  const dir = join(opts.dir, 'redis');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  const socketPath = join(dir, 'redis.sock');
  const pidFile = join(dir, 'redis.pid');
  const password = redisPassword(dir);
  if (existsSync(pidFile)) {
    const old = Number(readFileSync(pidFile, 'utf8'));
    // only a live redis-server serving this very directory: a stale pid may be anything now
    if (old > 0 && isAlive(old) && isOurRedis(old, socketPath)) {
      const r = new Redis({ path: socketPath, password, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
      r.on('error', () => undefined);
      await r.connect().then(() => r.call('SHUTDOWN'), () => process.kill(old, 'SIGTERM')).catch(() => undefined);
      r.disconnect();
      for (let i = 0; i < 100 && isAlive(old); i++) await new Promise((res) => setTimeout(res, 50));
    }
    rmSync(pidFile, { force: true });
  }
  // the password goes in a 0600 config file, never on the command line (/proc/<pid>/cmdline is public)
  const conf = join(dir, 'redis.conf');
  writeFileSync(conf, `requirepass "${password}"\n`, { mode: 0o600 });
  const args = [
    conf,
    '--port', String(opts.port ?? 0),
    '--bind', '127.0.0.1',
    '--unixsocket', socketPath,
    '--unixsocketperm', '700',
    '--dir', dir,
    '--pidfile', pidFile,
    '--appendonly', 'yes',
    '--appendfsync', opts.appendfsync ?? 'everysec',
    '--save', '',
    '--daemonize', 'no',
    '--loglevel', 'warning',
    '--logfile', join(dir, 'redis.log'),
  ];
  // its own process group (a terminal's Ctrl-C reaches us, not it: we stop it in order), and
  // still dies with us when we are SIGKILLed (pdeathsig)
  const argv = tiedToParent(['redis-server', ...args]);
  const child: ChildProcess = spawn(argv[0], argv.slice(1), { stdio: 'ignore', detached: true });
  const exited = new Promise<void>((res) => child.once('exit', () => res()));
  child.once('error', () => undefined);
  const ioUrl = socketPath;
  const deadline = Date.now() + 10_000;
  while (!(await ping(ioUrl, 500))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      throw new Error(`redis-server did not start (see ${join(dir, 'redis.log')}); is redis-server installed?`);
    }
    await new Promise((res) => setTimeout(res, 50));
  }
  return {
    url: ioUrl,
    socketPath,
    pid: child.pid!,
    async stop() {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM'); // redis writes the AOF and exits on SIGTERM
      const t = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(t);
    },
  };
}

/**
 * The embedded server's password: generated once into `<dir>/redis.pass` (0600), so only the
 * platform's user can connect (and the socket is 0700 besides). Function processes, which run
 * as other users, can do neither.
 */
function redisPassword(dir: string): string {
  const file = join(dir, PASSWORD_FILE);
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  const pw = randomBytes(24).toString('hex');
  writeFileSync(file, pw + '\n', { mode: 0o600 });
  return pw;
}

const PASSWORD_FILE = 'redis.pass';

/** Whether `pid` is a redis-server listening on `socketPath` (its argv names the socket). */
function isOurRedis(pid: number, socketPath: string): boolean {
  try {
    const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    return /redis-server|redis-check/.test(cmd[0] ?? '') && (cmd.includes(socketPath) || cmd.join(' ').includes(socketPath));
  } catch {
    return false; // no /proc: never signal a process we cannot identify
  }
}

/**
 * Opens an ioredis client for a `redis://[:password@]host:port` URL or a unix socket path; for
 * a socket, the embedded server's password is read from beside it.
 */
export function connectRedis(target: string, extra: Record<string, unknown> = {}): Redis {
  const opts = { maxRetriesPerRequest: null, ...extra };
  if (!target.startsWith('/')) return new Redis(target, opts);
  const pwFile = join(dirname(target), PASSWORD_FILE);
  const password = existsSync(pwFile) ? readFileSync(pwFile, 'utf8').trim() : undefined;
  return new Redis({ path: target, ...(password ? { password } : {}), ...opts });
}
