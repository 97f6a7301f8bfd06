/**
 * Keeps the embedded redis-server running, as `TokendSupervisor` keeps tokend: when it dies it is
 * started again on the same socket and AOF after a back-off (it reloads the AOF, so every
 * acknowledged write is back), each death and restart is logged and counted (the loop is
 * `Supervisor`, supervisor.ts). It also refuses writes while the AOF's disk is (nearly) full
 * (see `storage-guard.ts`), and after a death that could not write its AOF.
 */
import { ChildProcess, spawn } from 'node:child_process';
import { closeSync, openSync, readSync, statSync } from 'node:fs';
import type Redis from 'ioredis';
import type { InstanceLock } from './instance-lock';
import { aofWriteFailed, freeBytes, refuseWrites } from './storage-guard';
import { tiedToParent } from './process';
import { backoffDelayMs, ChildExit, exitText, SupervisedChild, Supervisor } from './supervisor';

/** Delay before the n-th consecutive restart (0-based), ms. */
export const REDIS_BACKOFF_MS = [100, 500, 1000, 2000, 5000];
/** A redis-server that ran this long before dying starts the back-off over, ms. */
export const REDIS_STABLE_RUN_MS = 30_000;
/** How often the free space under the AOF is checked, ms. */
const STORAGE_POLL_MS = 1000;

/** Back-off for the `consecutive`-th restart in a row (pure). */
export function redisRestartDelayMs(consecutive: number): number {
  return backoffDelayMs(REDIS_BACKOFF_MS, consecutive);
}

/** One redis-server process. */
export type RedisChild = SupervisedChild;

/** What the supervisor needs to know about the server it keeps. */
export interface RedisRecipe {
  /** The AOF's directory (free space is checked there). */
  dir: string;
  logFile: string;
  /** redis-server's arguments; `refuseWrites` starts it with writes refused. */
  args(refuseWrites: boolean): string[];
  /** Answers PING (with the password). */
  ping(timeoutMs: number): Promise<boolean>;
  /** A short-lived admin connection (CONFIG SET). */
  connect(): Redis;
  /** Writes are refused below this many free bytes. */
  reserveBytes: number;
  log(line: string): void;
}

/** Starts redis-server and resolves once it answers PING; rejects if it exits or stays silent 10 s. */
export async function spawnRedis(r: RedisRecipe, refusing: boolean): Promise<RedisChild> {
  // its own process group (a terminal's Ctrl-C reaches us, not it: we stop it in order), and
  // still dies with us when we are SIGKILLed (pdeathsig)
  const argv = tiedToParent(['redis-server', ...r.args(refusing)]);
  const child: ChildProcess = spawn(argv[0], argv.slice(1), { stdio: 'ignore', detached: true });
  const exited = new Promise<ChildExit>((res) => child.once('exit', (code, signal) => res({ code, signal })));
  child.once('error', () => undefined);
  const deadline = Date.now() + 10_000;
  while (!(await r.ping(500))) {
    if (child.exitCode !== null || child.signalCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`redis-server did not start (see ${r.logFile}); is redis-server installed?`);
    }
    await new Promise((res) => setTimeout(res, 50));
  }
  return {
    pid: child.pid!,
    exited,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM'); // redis writes the AOF and exits on SIGTERM
      const t = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(t);
    },
  };
}

export class RedisSupervisor {
  private loop!: Supervisor<RedisChild>;
  private stopping = false;
  private poll?: NodeJS.Timeout;
  private listeners: Array<() => void> = [];
  private logOffset = 0;
  private refusing = false;
  private checking = false;

  private constructor(
    private readonly recipe: RedisRecipe,
    private readonly lock: InstanceLock,
  ) {}

  /** Starts redis-server (throws if the first start fails) and keeps it running until `stop()`. */
  static async start(recipe: RedisRecipe, lock: InstanceLock): Promise<RedisSupervisor> {
    const s = new RedisSupervisor(recipe, lock);
    s.refusing = refuseWrites(freeBytes(recipe.dir), false, recipe.reserveBytes);
    s.loop = await Supervisor.start<RedisChild>({
      start: () => {
        s.logOffset = sizeOf(recipe.logFile);
        return spawnRedis(recipe, s.refusing);
      },
      backoffMs: REDIS_BACKOFF_MS,
      stableRunMs: REDIS_STABLE_RUN_MS,
      log: (line) => recipe.log(line),
      died: (p, exit, delay) => s.died(p, exit, delay),
      startFailed: (e, delay) => `redis-server restart failed: ${e.message}; retrying in ${delay} ms`,
      restarted: (p, n) => `redis-server restarted (pid ${p.pid}, restart ${n}); AOF reloaded`,
      afterRestart: () => {
        for (const fn of s.listeners) fn();
      },
    });
    if (s.refusing) s.recipe.log(s.refusingLine());
    s.poll = setInterval(() => void s.checkStorage(), STORAGE_POLL_MS);
    s.poll.unref();
    return s;
  }

  /** The pid of the redis-server running now. */
  get pid(): number {
    return this.loop.current.pid;
  }

  /** Restarts so far. */
  get restarts(): number {
    return this.loop.restarts;
  }

  /** Whether writes are refused now because the AOF's disk is (nearly) full. */
  get storageFull(): boolean {
    return this.refusing;
  }

  /** Calls `fn` after every restart; returns the call that stops it. */
  onRestart(fn: () => void): () => void {
    this.listeners.push(fn);
    return () => void (this.listeners = this.listeners.filter((f) => f !== fn));
  }

  /** The line for a death; one that could not write its AOF leaves writes refused. */
  private died(p: RedisChild, exit: ChildExit, delay: number): string {
    const full = aofWriteFailed(this.newLogLines());
    if (full) this.refusing = true;
    const why = full ? 'it could not write its AOF (disk full?); writes stay refused (503 storage_full) until ' +
      'space is freed' : 'the store is unavailable (503) until it is back';
    return `redis-server (pid ${p.pid}) died (${exitText(exit)}): ${why}; restarting in ${delay} ms`;
  }

  /** Refuses or re-allows writes as the free space under the AOF says. */
  private async checkStorage(): Promise<void> {
    if (this.stopping || this.checking) return;
    this.checking = true;
    try {
      await this.applyStorage();
    } finally {
      this.checking = false;
    }
  }

  private async applyStorage(): Promise<void> {
    const free = freeBytes(this.recipe.dir);
    const want = refuseWrites(free, this.refusing, this.recipe.reserveBytes);
    if (want === this.refusing) return;
    const c = this.recipe.connect();
    c.on('error', () => undefined);
    try {
      await c.config('SET', 'min-replicas-to-write', want ? '1' : '0');
    } catch {
      return; // down or restarting: the restart starts it with the state in force then
    } finally {
      c.disconnect();
    }
    this.refusing = want;
    const mib = ((free ?? 0) / 2 ** 20).toFixed(1);
    this.recipe.log(want ? this.refusingLine() : `disk under ${this.recipe.dir} has ${mib} MiB free again: writes accepted`);
  }

  private refusingLine(): string {
    const mib = ((freeBytes(this.recipe.dir) ?? 0) / 2 ** 20).toFixed(1);
    return `disk under ${this.recipe.dir} has ${mib} MiB free (reserve ${this.recipe.reserveBytes / 2 ** 20} MiB): writes refused (503 ` +
      `storage_full) until space is freed`;
  }

  /** redis.log written since the current server started. */
  private newLogLines(): string {
    try {
      const size = sizeOf(this.recipe.logFile);
      const len = Math.max(0, Math.min(size - this.logOffset, 64 * 1024));
      const buf = Buffer.alloc(len);
      const fd = openSync(this.recipe.logFile, 'r');
      try {
        readSync(fd, buf, 0, len, size - len);
      } finally {
        closeSync(fd);
      }
      return buf.toString('utf8');
    } catch {
      return '';
    }
  }

  /** Stops supervising, stops redis-server (SIGTERM: it writes the AOF; SIGKILL after 5 s), releases the lock. */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.poll) clearInterval(this.poll);
    await this.loop.stop();
    await this.lock.release();
  }
}

function sizeOf(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}
