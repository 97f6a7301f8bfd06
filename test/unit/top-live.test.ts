import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { CLEAR, liveLoop } from '../../cli/top';
import type { Overview } from '../../gateway/routes/overview-model';

jest.setTimeout(30_000);

const snapshot = (n: number): Overview => ({ at: `frame-${n}`, functions: [], jobs: [] });

describe('mlfaas top live loop (a fake gateway on a random port)', () => {
  let server: Server;
  let url: string;
  let served = 0;
  let failing = false;

  beforeAll(async () => {
    server = createServer((req, res) => {
      if (req.url !== '/system/overview') return void res.writeHead(404).end();
      if (failing) return void res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"unauthorized"}');
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(snapshot(++served)));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  /** Runs the loop until `frames` writes happened (or 20 s passed) and returns what it wrote. */
  async function run(frames: number): Promise<string[]> {
    const writes: string[] = [];
    const stop = new AbortController();
    const guard = setTimeout(() => stop.abort(), 20_000);
    const out = { columns: 80, write: (s: string) => (writes.push(s), writes.length >= frames && stop.abort(), true) };
    await liveLoop({ url, urlFrom: '--gateway' }, 100, out, stop.signal);
    clearTimeout(guard);
    return writes;
  }

  it('clears the screen and draws each new snapshot, then stops when aborted', async () => {
    failing = false;
    const writes = await run(3);
    expect(writes).toHaveLength(3);
    for (const w of writes) expect(w.startsWith(CLEAR)).toBe(true);
    const frames = writes.map((w) => /frame-(\d+)/.exec(w)![1]).map(Number);
    expect(frames[1]).toBeGreaterThan(frames[0]);
    expect(frames[2]).toBeGreaterThan(frames[1]);
  });

  it('keeps trying and says why while the gateway refuses', async () => {
    failing = true;
    const writes = await run(2);
    expect(writes).toHaveLength(2);
    expect(writes[0]).toContain('answered 401');
    expect(writes[0]).toContain('no credentials: see mlfaas jobs --help');
    expect(writes[0]).toContain('retrying every 100 ms');
  });
});
