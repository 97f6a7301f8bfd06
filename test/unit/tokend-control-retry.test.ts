/**
 * tokend reads a control connection for 100 ms at most; on a busy machine a client's line can
 * come later and find the connection closed unread (seen as EPIPE in the sanitizer test under
 * stress-ng). The client retries such a drop (every request is idempotent), and only such a drop.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, Server, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTokendControl } from '../../node-runtime/tokend-control';

describe('tokend control client', () => {
  let dir: string;
  let server: Server;
  let seen: number;
  const serve = (answer: (n: number, s: Socket) => void) =>
    new Promise<string>((resolve) => {
      const path = join(dir, `c${Math.random().toString(36).slice(2, 8)}.sock`);
      seen = 0;
      server = createServer((s) => answer(++seen, s)).listen(path, () => resolve(path));
    });
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'tl-ctl-'))));
  afterEach(async () => {
    await new Promise((r) => server.close(r));
    rmSync(dir, { recursive: true, force: true });
  });

  const stats = (s: Socket) => s.once('data', () => s.end('{"ok":true,"clients":[],"gpus":0}\n'));

  test('a connection closed unread is retried, and the retry answers', async () => {
    const path = await serve((n, s) => (n === 1 ? s.destroy() : stats(s)));
    await expect(createTokendControl(path).stats()).resolves.toMatchObject({ clients: [] });
    expect(seen).toBe(2);
  });

  test('gives up after three drops', async () => {
    const path = await serve((_, s) => s.destroy());
    await expect(createTokendControl(path).stats()).rejects.toThrow(/closed without a reply|EPIPE|ECONNRESET/);
    expect(seen).toBe(3);
  });

  test('a refusal is not retried', async () => {
    const path = await serve((_, s) => s.once('data', () => s.end('{"ok":false,"error":"control socket is root-only"}\n')));
    await expect(createTokendControl(path).stats()).rejects.toThrow(/root-only/);
    expect(seen).toBe(1);
  });
});
