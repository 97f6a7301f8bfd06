/**
 * GET /system/nodes on a real gateway (local provider, the agent in another process, so the
 * gateway finds tokend by its control socket under the data directory): basic auth and the
 * foreign-Origin refusal as every /system route, a query parameter refused naming it, tokend
 * absent (a reason, not a 5xx), a real tokend (policy dilu) with one raw client in its STATS, a
 * silent control socket answered within the bound. (Shutdown with a dashboard attached:
 * shutdown-streams.timing.test.ts.)
 */
import { mkdirSync } from 'node:fs';
import * as net from 'node:net';
import { join } from 'node:path';
import { localTokend, readNodes } from '../../gateway/routes/nodes';
import type { NodesAnswer } from '../../gateway/routes/nodes-model';
import { startTokend, type TokendProcess } from '../../node-runtime/tokend-process';
import { make, tmp } from '../native/helpers';
import { testGateway, testRedis, TestPlatform } from '../helpers/platform';

const PASSWORD = 'nodes-s3cret';
const auth = { authorization: `Basic ${Buffer.from(`admin:${PASSWORD}`).toString('base64')}` };

/** A raw tokend client on the CPU device (HELLO; tokend answers WELCOME): one row in STATS. */
function rawClient(socketPath: string): Promise<net.Socket> {
  const hello = Buffer.alloc(56);
  hello.writeUInt32LE(0x444e4b54, 0); // magic
  hello.writeUInt16LE(1, 4); // version
  hello.writeUInt16LE(1, 6); // HELLO
  hello.writeUInt32LE(0xffff, 8); // the CPU device
  hello.writeUInt32LE(1, 12); // SLO client
  return new Promise((resolve, reject) => {
    const s = net.createConnection(socketPath);
    s.once('error', reject);
    s.once('data', () => resolve(s));
    s.write(hello);
  });
}

describe('GET /system/nodes', () => {
  let redis: Awaited<ReturnType<typeof testRedis>>;
  let p: TestPlatform;
  let tokend: TokendProcess | undefined;
  let client: net.Socket | undefined;
  const nodes = async (q = '') => {
    const res = await p.get(`/system/nodes${q}`, { headers: auth });
    return { status: res.status, body: (await res.json()) as NodesAnswer & { error?: { field?: string } } };
  };

  beforeAll(async () => {
    make('all');
    redis = await testRedis();
    p = await testGateway(redis.url, { MLFAAS_BASIC_AUTH: 'true', MLFAAS_AUTH_PASSWORD: PASSWORD, MLFAAS_AGENT: 'false' });
  }, 120000);
  afterAll(async () => {
    client?.destroy();
    await tokend?.stop();
    await p?.stop().catch(() => undefined);
    await redis?.stop();
  }, 60000);

  it('asks for credentials and refuses a foreign Origin, as /system does', async () => {
    const anon = await p.get('/system/nodes');
    expect(anon.status).toBe(401);
    expect(anon.headers.get('www-authenticate')).toMatch(/^Basic/);
    const foreign = await p.get('/system/nodes', { headers: { ...auth, origin: 'http://evil.example' } });
    expect(foreign.status).toBe(403);
    expect(((await foreign.json()) as { error: { field: string } }).error.field).toBe('Origin');
  });

  it('refuses a query parameter with a 400 naming it', async () => {
    const r = await nodes('?verbose=1');
    expect(r.status).toBe(400);
    expect(r.body.error?.field).toBe('verbose');
  });

  it('without tokend: the node, its devices and enforcement, and why there are no clients, loans or clusters', async () => {
    const r = await nodes();
    expect(r.status).toBe(200);
    expect(r.body.provider).toBe('mlfaas-local');
    expect(r.body.nodes).toHaveLength(1);
    expect(r.body.nodes[0].devices.cpuCores).toBeGreaterThan(0);
    expect(r.body.nodes[0].enforcement.summary).toEqual(expect.any(String));
    expect(r.body.tokend).toMatchObject({ available: false, clients: [] });
    expect(r.body.tokend.source).toMatch(/no control socket at .*tokend-control\.sock/);
    expect(r.body.virtualClusters).toMatchObject({ clusters: [], source: expect.stringMatching(/one node/) });
    expect(r.body.loans).toMatchObject({ loans: [] });
  });

  it('with tokend: its clients and grants, and RCKM C under --policy dilu', async () => {
    const dir = join(p.dataDir, 'tokend');
    mkdirSync(dir, { recursive: true });
    tokend = await startTokend({ dir, policy: 'dilu', cpuCapacity: 1, windowMs: 10 });
    client = await rawClient(tokend.socketPath);
    const r = await nodes();
    expect(r.status).toBe(200);
    expect(r.body.tokend).toMatchObject({ available: true, policy: 'dilu', windowMs: 10 });
    const row = r.body.tokend.clients.find((c) => c.pid === process.pid);
    expect(row).toMatchObject({ device: 'cpu', slo: true, state: expect.any(String) });
    expect(row).toEqual(expect.objectContaining({ request: expect.any(Number), limit: expect.any(Number), smShare: expect.any(Number),
      grantedMs: expect.any(Number), usedMs: expect.any(Number) }));
    expect(r.body.tokend.rckm.map((x) => x.device)).toContain('cpu');
  });

  it('a control socket that never answers: the reason within the bound, not a hang', async () => {
    const t = tmp('nodes-');
    const path = join(t.dir, 'silent.sock');
    const accepted: net.Socket[] = [];
    const silent = net.createServer((c) => void accepted.push(c)).listen(path);
    await new Promise((r) => silent.once('listening', r));
    try {
      const a = await readNodes({ provider: () => 'x', enforcement: () => ({ spatial: 'none', temporal: 'none', memory: 'none', summary: 'none' }),
        tokend: localTokend(() => path, 200), clusters: { absent: 'none' }, timeoutMs: 5000 });
      expect(a.tokend).toMatchObject({ available: false, error: expect.stringMatching(/no reply in 200 ms/) });
    } finally {
      for (const c of accepted) c.destroy();
      await new Promise((r) => silent.close(r));
      t.cleanup();
    }
  });
});
