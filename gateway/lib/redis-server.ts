import { randomBytes } from 'node:crypto';
import { chmodSync, closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import Redis from 'ioredis';
import { acquireLock } from './instance-lock';
import { isAlive } from './process';
import { RedisSupervisor } from './redis-supervisor';
import { STORAGE_RESERVE_BYTES } from './storage-guard';

/**
 * A supervised `redis-server` child with data and AOF under `dir`, listening on a unix socket
 * (and optionally a port): restarted after it dies, writes refused while its disk is full.
 */
export interface EmbeddedRedis {
  /** Connection target for `connectRedis`: the unix socket path. */
  url: string;
  socketPath: string;
  /** The pid of the redis-server running now (a restart changes it). */
  readonly pid: number;
  /** Restarts after it died, so far. */
  readonly restarts: number;
  /** Whether writes are refused now (503 `storage_full`) because the AOF's disk is (nearly) full. */
  readonly storageFull: boolean;
  /** Calls `fn` after every restart (the gateway counts them); returns the call that stops it. */
  onRestart(fn: () => void): () => void;
  /** Stops it (it writes its AOF) and releases the data dir's Redis lock. */
  stop(): Promise<void>;
}

export interface EmbeddedRedisOptions {
  dir: string;
  /** Also listen on this TCP port on 127.0.0.1 (0 = unix socket only). */
  port?: number;
  /**
   * Fsync policy for the AOF. `always` (the default): a write is acknowledged only once it is
   * written and fsynced, so no acknowledged write is lost to a crash of Redis or of the machine,
   * and a write Redis cannot persist (disk full) is never acknowledged (redis-server exits and
   * is restarted). It costs an fsync per event-loop turn (a few ms; concurrent writes share
   * it), which the control plane's write rate affords. `everysec` is faster but acknowledges
   * writes it has not written yet (up to 2 s when fsync is slow, and the write that hits a full
   * disk), which a crash then loses.
   */
  appendfsync?: 'always' | 'everysec';
  /** Writes are refused below this much free space under the AOF, bytes (default 8 MiB). */
  reserveBytes?: number;
  /** The platform log (default: stderr, `[mlfaas] …`). */
  log?: (line: string) => void;
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

const stderrLog = (line: string) => void process.stderr.write(`[mlfaas] ${line}\n`);

/**
 * Starts redis-server under `<dir>/redis` and supervises it. It first takes that directory's
 * lock (`redis.lock`, see `instance-lock.ts`): while another process runs a server there this
 * throws `AlreadyRunningError` and touches nothing. Holding the lock, a redis-server still
 * serving the socket is an orphan of a dead instance (one started without pdeathsig): it is shut
 * down with SHUTDOWN, which writes its AOF, and the new server loads it.
 */
export async function startEmbeddedRedis(opts: EmbeddedRedisOptions): Promise<EmbeddedRedis> {
  const dir = join(opts.dir, 'redis');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const lock = await acquireLock(join(dir, 'redis.lock'), `redis-server for ${opts.dir}`);
  try {
    chmodSync(dir, 0o700);
    const socketPath = join(dir, 'redis.sock');
    const pidFile = join(dir, 'redis.pid');
    const password = redisPassword(dir);
    await shutDownOrphan(pidFile, socketPath, password);
    // the password goes in a 0600 config file, never on the command line (/proc/<pid>/cmdline is public)
    const conf = join(dir, 'redis.conf');
    writeFileSync(conf, `requirepass "${password}"\n`, { mode: 0o600 });
    chmodSync(conf, 0o600);
    // redis opens its log 0644; created here first, it stays the platform's alone
    const logFile = join(dir, 'redis.log');
    closeSync(openSync(logFile, 'a', 0o600));
    chmodSync(logFile, 0o600);
    const args = (refuseWrites: boolean) => [
      conf,
      '--port', String(opts.port ?? 0),
      '--bind', '127.0.0.1',
      '--unixsocket', socketPath,
      '--unixsocketperm', '700',
      '--dir', dir,
      '--pidfile', pidFile,
      '--appendonly', 'yes',
      '--appendfsync', opts.appendfsync ?? 'always',
      '--save', '',
      '--daemonize', 'no',
      '--loglevel', 'notice',
      '--logfile', logFile,
      '--min-replicas-to-write', refuseWrites ? '1' : '0',
    ];
    const s = await RedisSupervisor.start(
      {
        dir,
        logFile,
        args,
        ping: (ms) => ping(socketPath, ms),
        connect: () => connectRedis(socketPath, { maxRetriesPerRequest: 0, retryStrategy: () => null }),
        reserveBytes: opts.reserveBytes ?? STORAGE_RESERVE_BYTES,
        log: opts.log ?? stderrLog,
      },
      lock,
    );
    return {
      url: socketPath,
      socketPath,
      get pid() {
        return s.pid;
      },
      get restarts() {
        return s.restarts;
      },
      get storageFull() {
        return s.storageFull;
      },
      onRestart: (fn) => s.onRestart(fn),
      stop: () => s.stop(),
    };
  } catch (e) {
    await lock.release();
    throw e;
  }
}

/** Shuts down a live redis-server of this directory that no instance owns (we hold the lock). */
async function shutDownOrphan(pidFile: string, socketPath: string, password: string): Promise<void> {
  if (!existsSync(pidFile)) return;
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

/**
 * The embedded server's password: generated once into `<dir>/redis.pass` (0600), so only the
 * platform's user can connect (and the socket is 0700 besides). Function processes, which run
 * as other users, can do neither.
 */
function redisPassword(dir: string): string {
  const file = join(dir, PASSWORD_FILE);
  if (existsSync(file)) {
    chmodSync(file, 0o600);
    return readFileSync(file, 'utf8').trim();
  }
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
