/**
 * Replays every request the real faas-cli 0.16.37 sent (shared/reference/faas-cli-wire.txt)
 * against the real gateway, in order, and checks status codes and bodies against what the CLI
 * accepts. The capture's mock was stateless for invocations and logs; where our stateful answer
 * legitimately differs, the table below says why.
 */
import { ImageStore } from '../../gateway/providers/local/image-store';
import { seedEchoHttp, seedImage } from '../helpers/images';
import { testGateway, testRedis, TestPlatform } from '../helpers/platform';
import { readWire, WireRequest } from '../helpers/wire';

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/** Where the stateless mock's code is not the right answer for a real, stateful gateway. */
const DIFFERENT: Record<string, { status: number; why: string }> = {
  '[no stack.yml] invoke sync ns+query+header+GET': { status: 404, why: 'echo.dev was removed by "remove -f stack.yml" just before' },
  '[no stack.yml] invoke async callback': { status: 404, why: 'sentiment was removed by "remove -f stack.yml" just before' },
  '[no stack.yml] logs -n dev --since 5m': { status: 404, why: 'flagfn lives in openfaas-fn, not dev' },
  'secret create': { status: 409,
    why: 'hf-token exists from the start: the deploys before it name it, and a deploy naming a missing secret is a 400 (as in faas-netes)' },
};

/** Requests that are not for the gateway (faas-cli's function store lives elsewhere) or probe a mock's canned quirks. */
const skip = (w: WireRequest) => w.path.startsWith('/store/') || w.cmd.startsWith('[quirk]');

function seed(images: ImageStore) {
  const py = 'import sys\nsys.stdout.write("sentiment: " + sys.stdin.read())\n';
  seedImage(images, 'ghcr.io/example/sentiment:0.1.0', { 'index.py': py }, { language: 'dockerfile', kind: 'classic', mode: 'classic' });
  for (const image of ['ghcr.io/x/y:1', 'ghcr.io/x/y:2', 'ghcr.io/openfaas/figlet:latest', 'i:1']) {
    seedImage(images, image, { 'index.js': 'process.stdin.pipe(process.stdout)\n' }, { language: 'dockerfile', kind: 'classic', mode: 'classic',
      fprocess: 'cat' });
  }
  seedEchoHttp(images);
}

async function send(p: TestPlatform, w: WireRequest): Promise<Response> {
  const headers: Record<string, string> = { ...w.headers };
  delete headers['content-length'];
  const ac = new AbortController();
  const res = await fetch(p.gw.url + w.path, { method: w.method, headers, body: w.body, signal: ac.signal });
  if (w.path.includes('follow=true')) ac.abort(); // a followed log stream never ends
  return res;
}

/** What faas-cli needs from each body it parses. */
async function checkBody(w: WireRequest, res: Response): Promise<void> {
  if (res.status >= 300 || w.path.includes('follow=true')) return;
  if (w.method === 'GET' && w.path.startsWith('/system/functions')) {
    const list = (await res.json()) as Array<Record<string, unknown>>;
    expect(Array.isArray(list)).toBe(true);
    for (const f of list) {
      expect(f.createdAt).toMatch(RFC3339);
      expect(Number.isInteger(f.replicas) && (f.replicas as number) >= 0).toBe(true);
      expect(Number.isInteger(f.invocationCount)).toBe(true);
      expect(typeof f.name).toBe('string');
    }
  } else if (w.method === 'GET' && w.path.startsWith('/system/function/')) {
    const f = (await res.json()) as Record<string, unknown>;
    expect(f.name).toBe(w.path.split('/')[3].split('?')[0]);
    expect(f.createdAt).toMatch(RFC3339);
  } else if (w.path === '/system/info') {
    const info = (await res.json()) as { provider: { version: unknown }; version: { release: string } };
    expect(info.provider.version).toEqual(expect.objectContaining({ release: expect.any(String), sha: expect.any(String) }));
    expect(info.version.release).toEqual(expect.any(String));
  } else if (w.path === '/system/namespaces') {
    expect(await res.json()).toEqual(expect.arrayContaining(['openfaas-fn']));
  } else if (w.path === '/system/secrets' && w.method === 'GET') {
    expect(await res.json()).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'hf-token' })]));
  } else if (w.path.startsWith('/system/logs')) {
    const lines = (await res.text()).split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, string>);
    for (const l of lines) expect(l).toEqual(expect.objectContaining({ name: 'flagfn', timestamp: expect.stringMatching(RFC3339), text: expect.any(String) }));
  } else if (w.path.startsWith('/function/')) {
    expect(res.headers.get('x-call-id')).toBeTruthy();
    // present and a number of seconds (Number(null) is 0: a missing header must not pass as 0 s)
    const duration = res.headers.get('x-duration-seconds');
    expect(duration).toMatch(/^\d+(\.\d+)?$/);
    expect(Number(duration)).toBeLessThan(60);
  }
}

describe('faas-cli 0.16.37 wire replay', () => {
  const wire = readWire();
  let redisOpen: Awaited<ReturnType<typeof testRedis>>;
  let redisAuth: Awaited<ReturnType<typeof testRedis>>;
  let open: TestPlatform;
  let auth: TestPlatform;

  beforeAll(async () => {
    [redisOpen, redisAuth] = await Promise.all([testRedis(), testRedis()]);
    open = await testGateway(redisOpen.url);
    auth = await testGateway(redisAuth.url, { MLFAAS_BASIC_AUTH: 'true', MLFAAS_AUTH_USER: 'admin', MLFAAS_AUTH_PASSWORD: 's3cret' });
    seed(open.images);
    seed(auth.images);
    // the capture deploys with secrets hf-token and s1 before "secret create": a real gateway needs them first
    for (const [name, ns] of [['hf-token', 'openfaas-fn'], ['s1', 'openfaas-fn'], ['s1', 'dev']]) {
      expect((await open.json('POST', `/system/secrets?namespace=${ns}`, { name, value: 'v' })).status).toBe(201);
    }
  });

  afterAll(async () => {
    await Promise.all([open?.stop(), auth?.stop()]);
    await Promise.all([redisOpen?.stop(), redisAuth?.stop()]);
  });

  it('parses the capture', () => {
    expect(wire.length).toBeGreaterThan(60);
    expect(wire.filter((w) => !skip(w)).length).toBeGreaterThan(55);
  });

  it('answers every request as faas-cli expects, in order', async () => {
    const results: string[] = [];
    for (const w of wire) {
      if (skip(w)) continue;
      const p = w.cmd.startsWith('[auth gw]') ? auth : open;
      const res = await send(p, w);
      const want = DIFFERENT[w.cmd]?.status ?? w.mockStatus;
      results.push(`${w.cmd} | ${w.method} ${w.path} → ${res.status} (want ${want})`);
      if (res.status !== want) throw new Error(`mismatch:\n${results.join('\n')}\nbody: ${await res.text()}`);
      await checkBody(w, res);
    }
    expect(results.length).toBeGreaterThan(55);
  });

  it('never answers the codes faas-cli rejects (201 on deploy, 204 on remove)', async () => {
    const d = { service: 'q1', image: 'i:1', labels: {}, annotations: {} };
    const put = await open.json('PUT', '/system/functions', d);
    expect(put.status).toBe(404);
    const post = await open.json('POST', '/system/functions', d);
    expect(post.status).toBe(202);
    expect((await open.json('PUT', '/system/functions', d)).status).toBe(202);
    expect((await open.json('DELETE', '/system/functions', { functionName: 'q1' })).status).toBe(202);
  });
});
