/** The embedded Redis: password-protected, private socket, and a stale pid file never signals a stranger. */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createConnection } from 'node:net';
import { connectRedis, startEmbeddedRedis } from '../../gateway/lib/redis-server';
import { isAlive } from '../../gateway/lib/process';

describe('embedded redis-server', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'mlfaas-redis-t-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  test('a stale pid file naming an unrelated live process leaves that process alone', async () => {
    const stranger = spawn('sleep', ['30'], { stdio: 'ignore' });
    try {
      mkdirSync(join(dir, 'redis'), { recursive: true });
      writeFileSync(join(dir, 'redis', 'redis.pid'), String(stranger.pid));
      const r = await startEmbeddedRedis({ dir });
      try {
        expect(isAlive(stranger.pid!)).toBe(true);
        expect(stranger.exitCode).toBeNull();
      } finally {
        await r.stop();
      }
    } finally {
      stranger.kill('SIGKILL');
    }
  });

  test('needs its password (kept 0600 beside a 0700 socket dir, never on the command line)', async () => {
    const r = await startEmbeddedRedis({ dir });
    try {
      const pass = join(dir, 'redis', 'redis.pass');
      expect(statSync(pass).mode & 0o777).toBe(0o600);
      expect(statSync(join(dir, 'redis')).mode & 0o777).toBe(0o700);
      expect(readFileSync(`/proc/${r.pid}/cmdline`, 'utf8')).not.toContain(readFileSync(pass, 'utf8').trim());
      const reply = await new Promise<string>((resolve, reject) => {
        const sock = createConnection(r.socketPath, () => sock.write('GET x\r\n'));
        sock.once('data', (b) => {
          resolve(b.toString());
          sock.destroy();
        });
        sock.once('error', reject);
      });
      expect(reply).toMatch(/NOAUTH/);
      const ok = connectRedis(r.url);
      expect(await ok.ping()).toBe('PONG');
      ok.disconnect();
    } finally {
      await r.stop();
    }
  });

  test('a restart on the same directory keeps the password and the data', async () => {
    let r = await startEmbeddedRedis({ dir });
    let c = connectRedis(r.url);
    await c.set('k', 'v');
    c.disconnect();
    await r.stop();
    r = await startEmbeddedRedis({ dir });
    c = connectRedis(r.url);
    try {
      expect(await c.get('k')).toBe('v');
    } finally {
      c.disconnect();
      await r.stop();
    }
  });
});
