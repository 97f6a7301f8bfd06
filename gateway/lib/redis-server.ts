import { spawn, ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import Redis from 'ioredis';
import { isAlive } from './process';

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
  mkdirSync(dir, { recursive: true });
  const socketPath = join(dir, 'redis.sock');
  const pidFile = join(dir, 'redis.pid');
  if (existsSync(pidFile)) {
    const old = Number(readFileSync(pidFile, 'utf8'));
    if (old > 0 && isAlive(old)) {
      const r = new Redis({ path: socketPath, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
      r.on('error', () => undefined);
      await r.connect().then(() => r.call('SHUTDOWN'), () => process.kill(old, 'SIGTERM')).catch(() => undefined);
      r.disconnect();
      for (let i = 0; i < 100 && isAlive(old); i++) await new Promise((res) => setTimeout(res, 50));
    }
    rmSync(pidFile, { force: true });
  }
  const args = [
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
  const child: ChildProcess = spawn('redis-server', args, { stdio: 'ignore' });
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

/** Opens an ioredis client for a `redis://host:port` URL or a unix socket path. */
export function connectRedis(target: string, extra: Record<string, unknown> = {}): Redis {
  const opts = { maxRetriesPerRequest: null, ...extra };
  return target.startsWith('/') ? new Redis({ path: target, ...opts }) : new Redis(target, opts);
}
