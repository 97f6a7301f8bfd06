/**
 * The control plane's store under stress: redis-server SIGKILLed is restarted by its supervisor
 * (logged, counted on /metrics) with its data; a full disk answers 503 `storage_full` (or 503
 * while Redis restarts), and nothing that was acknowledged is lost, nothing refused appears.
 */
import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, statfsSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../gateway/config';
import { EmbeddedRedis, startEmbeddedRedis } from '../../gateway/lib/redis-server';
import { redisRestartDelayMs, REDIS_BACKOFF_MS } from '../../gateway/lib/redis-supervisor';
import { aofWriteFailed, refuseWrites } from '../../gateway/lib/storage-guard';
import type { Gateway } from '../../gateway/server';
import { startPlatformGateway } from '../../cli/compose';
import { eventually, TEST_ENV } from '../helpers/platform';

const MiB = 1024 * 1024;
const asRoot = process.getuid?.() === 0 ? it : it.skip;

test.each([
  { consecutive: 0, want: REDIS_BACKOFF_MS[0] },
  { consecutive: 3, want: REDIS_BACKOFF_MS[3] },
  { consecutive: 99, want: REDIS_BACKOFF_MS[REDIS_BACKOFF_MS.length - 1] },
])('restart back-off after $consecutive restarts in a row: $want ms', ({ consecutive, want }) => {
  expect(redisRestartDelayMs(consecutive)).toBe(want);
});

test.each([
  { name: 'plenty free', free: 100 * MiB, refusing: false, want: false },
  { name: 'below the reserve', free: 7 * MiB, refusing: false, want: true },
  { name: 'still below twice the reserve', free: 12 * MiB, refusing: true, want: true },
  { name: 'twice the reserve free again', free: 16 * MiB, refusing: true, want: false },
  { name: 'unknown: keeps the state', free: undefined, refusing: true, want: true },
])('refuse writes: $name', ({ free, refusing, want }) => {
  expect(refuseWrites(free, refusing, 8 * MiB)).toBe(want);
});

test.each([
  { line: '# Short write while writing to the AOF file: (nwritten=1517, expected=20033)', want: true },
  { line: "# Can't recover from AOF write error when the AOF fsync policy is 'always'. Exiting...", want: true },
  { line: '* Ready to accept connections', want: false },
])('redis.log says the AOF write failed: $line', ({ line, want }) => {
  expect(aofWriteFailed(line)).toBe(want);
});

interface Stack {
  redis: EmbeddedRedis;
  gw: Gateway;
  logged: string[];
  dataDir: string;
  post(path: string, body: unknown): Promise<Response>;
  get(path: string): Promise<Response>;
  stop(): Promise<void>;
}

/** A supervised Redis under `redisDir` and a gateway (no agent) on it. */
async function stack(redisDir: string, reserveBytes?: number): Promise<Stack> {
  const logged: string[] = [];
  const redis = await startEmbeddedRedis({ dir: redisDir, reserveBytes, log: (l) => logged.push(l) });
  const dataDir = mkdtempSync(join(tmpdir(), 'mlfaas-cp-data-'));
  const cfg = loadConfig({ ...TEST_ENV, MLFAAS_AGENT: 'false', MLFAAS_DATA_DIR: dataDir });
  const gw = await startPlatformGateway(cfg, redis.url, { embeddedRedis: redis });
  return {
    redis,
    gw,
    logged,
    dataDir,
    post: (path, body) => fetch(gw.url + path, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
    get: (path) => fetch(gw.url + path),
    async stop() {
      await gw.close();
      await redis.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

const secretNames = async (s: Stack) => ((await (await s.get('/system/secrets')).json()) as Array<{ name: string }>).map((x) => x.name);
const healthy = async (s: Stack) => (await s.get('/healthz').catch(() => undefined))?.status === 200;

it('redis-server killed with SIGKILL is restarted with its data; /healthz is 200 again, the restart logged and counted', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'mlfaas-cp-redis-'));
  const s = await stack(dir);
  try {
    expect((await s.post('/system/secrets', { name: 'before-kill', value: 'v1' })).status).toBe(201);
    const old = s.redis.pid;
    process.kill(old, 'SIGKILL');
    expect(await eventually(async () => s.redis.pid !== old && (await healthy(s)), 30000, 100)).toBe(true);
    expect(await secretNames(s)).toContain('before-kill');
    expect((await s.post('/system/secrets', { name: 'after-kill', value: 'v2' })).status).toBe(201);
    expect(s.logged.join('\n')).toMatch(new RegExp(`redis-server \\(pid ${old}\\) died \\(SIGKILL\\)`));
    expect(s.logged.join('\n')).toMatch(/redis-server restarted \(pid \d+, restart 1\)/);
    const metrics = await (await s.get('/metrics')).text();
    expect(metrics).toMatch(/mlfaas_component_restarts_total\{component="redis"\} 1/);
  } finally {
    await s.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}, 90000);

describe('a full disk under the AOF (a tmpfs)', () => {
  const mounts: string[] = [];
  afterAll(() => {
    for (const m of mounts) {
      try {
        execFileSync('umount', ['-l', m]);
      } catch {
        /* not mounted */
      }
      rmSync(m, { recursive: true, force: true });
    }
  });
  const tmpfs = (size: string) => {
    const m = mkdtempSync(join(tmpdir(), 'mlfaas-cp-full-'));
    mounts.push(m);
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size},mode=0700`, 'tmpfs', m]);
    return m;
  };

  asRoot('below the reserve writes answer 503 storage_full; what got 201 survives a crash of Redis, what got 503 never appears', async () => {
    const mount = tmpfs('24m');
    const s = await stack(mount, 4 * MiB);
    const ballast = join(mount, 'ballast');
    try {
      const acked: string[] = [];
      const refused: string[] = [];
      for (let i = 0; i < 3; i++) {
        const r = await s.post('/system/secrets', { name: `ok-${i}`, value: 'x'.repeat(1000) });
        expect(r.status).toBe(201);
        acked.push(`ok-${i}`);
      }
      fillLeaving(ballast, mount, 1 * MiB);
      let last: { status: number; code?: string; retryAfter: string | null } | undefined;
      expect(
        await eventually(async () => {
          const name = `try-${acked.length + refused.length}`;
          const r = await s.post('/system/secrets', { name, value: 'y' });
          const body = (await r.json().catch(() => ({}))) as { error?: { code: string } };
          last = { status: r.status, code: body.error?.code, retryAfter: r.headers.get('retry-after') };
          (r.status === 201 ? acked : refused).push(name);
          return r.status === 503;
        }, 20000, 200),
      ).toBe(true);
      expect(last).toEqual({ status: 503, code: 'storage_full', retryAfter: expect.any(String) });
      expect(s.redis.storageFull).toBe(true);
      expect(await healthy(s)).toBe(true); // reads go on
      expect(s.logged.join('\n')).toMatch(/writes refused \(503 storage_full\)/);

      rmSync(ballast);
      expect(await eventually(async () => (await s.post('/system/secrets', { name: 'after-space', value: 'z' })).status === 201, 20000, 200)).toBe(true);
      acked.push('after-space');
      process.kill(s.redis.pid, 'SIGKILL');
      expect(await eventually(() => healthy(s), 30000, 100)).toBe(true);
      const names = await secretNames(s);
      for (const a of acked) expect(names).toContain(a);
      for (const r of refused) expect(names).not.toContain(r);
    } finally {
      await s.stop();
    }
  }, 120000);

  asRoot('a write that meets a disk full to the byte is refused (503), never acknowledged, and Redis comes back once space is freed', async () => {
    const mount = tmpfs('16m');
    const s = await stack(mount, 0); // no reserve: the write itself meets the full disk
    const ballast = join(mount, 'ballast');
    try {
      expect((await s.post('/system/secrets', { name: 'kept', value: 'k' })).status).toBe(201);
      fillLeaving(ballast, mount, 0);
      const r = await s.post('/system/secrets', { name: 'refused', value: 'r'.repeat(64 * 1024) });
      expect(r.status).toBe(503);
      expect(['unavailable', 'storage_full']).toContain(((await r.json()) as { error: { code: string } }).error.code);
      expect(await eventually(() => /could not write its AOF/.test(s.logged.join('\n')), 20000, 100)).toBe(true);
      rmSync(ballast);
      expect(await eventually(async () => (await s.post('/system/secrets', { name: 'later', value: 'l' })).status === 201, 45000, 200)).toBe(true);
      process.kill(s.redis.pid, 'SIGKILL');
      expect(await eventually(() => healthy(s), 30000, 100)).toBe(true);
      const names = await secretNames(s);
      expect(names).toEqual(expect.arrayContaining(['kept', 'later']));
      expect(names).not.toContain('refused');
    } finally {
      await s.stop();
    }
  }, 150000);
});

/** Fills the filesystem of `dir` with `file` until only about `leave` bytes are free (0: none at all). */
function fillLeaving(file: string, dir: string, leave: number): void {
  const fd = openSync(file, 'w');
  try {
    for (const chunk of [MiB, 64 * 1024, 4096, 512, 1]) {
      const buf = Buffer.alloc(chunk, 1);
      for (;;) {
        const st = statfsSync(dir);
        if (leave > 0 && st.bavail * st.bsize - chunk < leave) break;
        try {
          writeSync(fd, buf);
        } catch {
          break; // ENOSPC
        }
      }
    }
  } finally {
    closeSync(fd);
  }
}
