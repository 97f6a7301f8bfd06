/**
 * The bad-input probe: every endpoint of the README's HTTP API table, fed bad input. Each case
 * has an exact expected status; every 4xx is JSON `{error:{code,message,field?}}` naming the
 * field where there is one; nothing answers 5xx except the documented 501s; nothing hangs.
 * Raw-socket cases (malformed request lines, huge headers, lying Content-Length) live in
 * `bad-input-raw.test.ts`. Cases marked `ownedBy: 'jobs'` are fixed on the training-jobs branch.
 */
import { aFunction } from '../helpers/fixtures';
import { seedEchoHttp, seedImage } from '../helpers/images';
import { testGateway, testRedis, TestPlatform } from '../helpers/platform';
import { BODY_LIMIT_BYTES, Case, fnNotFound, invalid, notFound, overBodyLimit } from './bad-input/case';
import { boundsCases } from './bad-input/cases-bounds';
import { functionCases } from './bad-input/cases-functions';
import { invokeCases } from './bad-input/cases-invoke';
import { systemCases } from './bad-input/cases-system';
import { modelUriCases } from './bad-input/cases-model-uri';
import { timeoutCases } from './bad-input/cases-timeouts';

const good = aFunction('good').minScale(0).build();

/** The probe's first hand-written cases (issue 9's list), kept as they were found. */
const HAND: Case[] = [
  { name: 'deploy: array body', method: 'POST', path: '/system/functions', body: [good], ...invalid('body') },
  { name: 'deploy: name too long', method: 'POST', path: '/system/functions', body: { ...good, service: 'a'.repeat(64) }, ...invalid('service') },
  { name: 'deploy: negative min_scale', method: 'POST', path: '/system/functions', body: { ...good, labels: { 'com.openfaas.scale.min': '-1' } },
    ...invalid('labels.com.openfaas.scale.min') },
  { name: 'deploy: scale.max 1e20', method: 'POST', path: '/system/functions',
    body: { ...good, labels: { 'com.openfaas.scale.max': '100000000000000000000' } }, ...invalid('labels.com.openfaas.scale.max') },
  { name: 'deploy: image ..', method: 'POST', path: '/system/functions', body: { ...good, image: '..' }, ...invalid('image') },
  { name: 'update: invalid body', method: 'PUT', path: '/system/functions', body: { service: 'x', image: 7 }, ...invalid('image') },
  { name: 'logs: since before 1970', method: 'GET', path: '/system/logs?name=exists&since=1969-12-31T23:59:59Z', ...invalid('since') },
  { name: 'logs: negative tail', method: 'GET', path: '/system/logs?name=exists&tail=-3', ...invalid('tail') },
  { name: 'get: malformed percent-encoding', method: 'GET', path: '/system/function/%zz', ...invalid('name') },
  { name: 'invoke: malformed percent-encoding', method: 'POST', path: '/function/%E0', raw: 'x', ...invalid('name') },
  { name: 'invoke: empty name', method: 'POST', path: '/function/', raw: 'x', ...invalid('name') },
  { name: 'invoke: bad namespace', method: 'POST', path: '/function/f.BAD', raw: 'x', ...invalid('namespace') },
  { name: 'invoke: unknown', method: 'POST', path: '/function/ghost', raw: 'x', ...fnNotFound },
  { name: 'async: invalid namespace', method: 'POST', path: '/async-function/f.BAD', raw: 'x', ...invalid('namespace') },
  { name: 'async: training function', method: 'POST', path: '/async-function/trainer', raw: 'x', ...invalid('function') },
  { name: 'async: callback not a url', method: 'POST', path: '/async-function/exists', raw: 'x', headers: { 'x-callback-url': 'not a url' },
    ...invalid('X-Callback-Url') },
  { name: 'system: body too large', method: 'POST', path: '/system/functions', raw: JSON.stringify({ ...good, envVars: { A: overBodyLimit() } }), status: 413,
    code: 'payload_too_large', field: 'body' },
  { name: 'update: unknown function', method: 'PUT', path: '/system/functions', body: { ...good, service: 'ghost' }, ...notFound },
];

const CASES: Case[] = [...HAND, ...functionCases(), ...systemCases(), ...invokeCases(), ...boundsCases(), ...modelUriCases(), ...timeoutCases()];

/** Every endpoint of the README's HTTP API table, as method + path pattern. */
const ENDPOINTS: Array<[string, RegExp]> = [
  ['GET', /^\/healthz$/],
  ['GET', /^\/metrics$/],
  ['GET', /^\/system\/info$/],
  ['GET', /^\/system\/functions(\?|$)/],
  ['POST', /^\/system\/functions$/],
  ['PUT', /^\/system\/functions$/],
  ['DELETE', /^\/system\/functions$/],
  ['GET', /^\/system\/function\/[^/]+/],
  ['POST', /^\/system\/scale-function\/[^/]+/],
  ['GET', /^\/system\/logs\?/],
  ['GET', /^\/system\/capability\?/],
  ['GET', /^\/system\/scaling-events\?/],
  ['POST', /^\/system\/jobs$/],
  ['POST', /^\/system\/jobs\?dryRun=/],
  ['GET', /^\/system\/jobs$/],
  ['GET', /^\/system\/jobs\/[^/]+$/],
  ['DELETE', /^\/system\/jobs\/[^/]+$/],
  ['GET', /^\/system\/jobs\/[^/]+\/events$/],
  ['GET', /^\/system\/secrets/],
  ['POST', /^\/system\/secrets/],
  ['PUT', /^\/system\/secrets/],
  ['DELETE', /^\/system\/secrets/],
  ['GET', /^\/system\/namespaces$/],
  ['GET', /^\/system\/namespace\/[^/]+$/],
  ['POST', /^\/system\/namespace/],
  ['PUT', /^\/system\/namespace\/[^/]+$/],
  ['DELETE', /^\/system\/namespace\/[^/]+$/],
  ['POST', /^\/function\//],
  ['GET', /^\/function\//],
  ['POST', /^\/async-function\//],
];

interface ErrorBody {
  error: { code: string; message: string; field?: string };
}

describe('bad input on every endpoint', () => {
  let redis: Awaited<ReturnType<typeof testRedis>>;
  let p: TestPlatform;
  beforeAll(async () => {
    redis = await testRedis();
    p = await testGateway(redis.url, { MLFAAS_MAX_BODY_BYTES: String(BODY_LIMIT_BYTES), MLFAAS_BASIC_AUTH: 'false' });
    seedEchoHttp(p.images);
    // a training image whose harness fails at once: no case may get as far as running it
    seedImage(p.images, 'test/trainer:1', { 'index.js': 'process.exit(1)\n' }, { language: 'node', kind: 'training', mode: 'job', fprocess: 'node index.js' });
    expect((await p.json('POST', '/system/functions', aFunction('exists').minScale(0).maxScale(3).build())).status).toBe(202);
    expect((await p.json('POST', '/system/functions', aFunction('trainer').image('test/trainer:1').build())).status).toBe(202);
    expect((await p.json('POST', '/system/secrets', { name: 'dup', value: 'v' })).status).toBe(201);
    expect((await p.json('POST', '/system/secrets?namespace=elsewhere', { name: 'only-there', value: 'v' })).status).toBe(201);
  });
  afterAll(async () => {
    await p?.stop();
    await redis?.stop();
  });

  it(`has at least 300 cases (${CASES.length}) covering every endpoint of the HTTP API table`, () => {
    expect(CASES.length).toBeGreaterThanOrEqual(300);
    const uncovered = ENDPOINTS.filter(([m, re]) => !CASES.some((c) => c.method === m && re.test(c.path))).map(([m, re]) => `${m} ${re.source}`);
    expect(uncovered).toEqual([]);
  });

  test.each(CASES)('$name → $status $code', async (c) => {
    const body = c.raw ?? (c.body === undefined ? undefined : JSON.stringify(c.body));
    const res = await p.get(c.path, {
      method: c.method,
      body,
      headers: { 'content-type': 'application/json', ...c.headers },
      signal: AbortSignal.timeout(5000), // a hang fails the case instead of the suite
    });
    const text = await res.text();
    expect(`${res.status} ${text}`).toMatch(new RegExp(`^${c.status} `)); // shows the body when the status is wrong
    if (res.status >= 500) expect(res.status).toBe(501); // the documented not-implemented namespace verbs only
    if (res.status < 400) return;
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const err = (JSON.parse(text) as ErrorBody).error;
    expect(err).toEqual({ code: c.code, message: expect.any(String), ...(c.field !== undefined ? { field: c.field } : {}) });
    expect(err.message.length).toBeGreaterThan(5);
  });

  it('lost nothing already accepted: the functions and the secret deployed before are intact', async () => {
    const f = (await (await p.get('/system/function/exists')).json()) as { name: string; image: string; labels: Record<string, string> };
    expect(f).toEqual(expect.objectContaining({ name: 'exists', image: 'test/echo-http:1' }));
    expect(f.labels).toEqual({ 'com.openfaas.scale.min': '0', 'com.openfaas.scale.max': '3' });
    expect((await p.get('/system/function/trainer')).status).toBe(200);
    expect(await (await p.get('/system/secrets')).json()).toEqual([{ name: 'dup', namespace: 'openfaas-fn' }]);
    const names = ((await (await p.get('/system/functions')).json()) as Array<{ name: string }>).map((x) => x.name).sort();
    expect(names).toEqual(['exists', 'trainer']);
    // refused deploys into other namespaces left neither a function nor a namespace there
    for (const ns of ['dev', 'elsewhere', 'nope']) expect(await (await p.get(`/system/functions?namespace=${ns}`)).json()).toEqual([]);
    expect(((await (await p.get('/system/namespaces')).json()) as string[]).sort()).toEqual(['elsewhere', 'openfaas-fn']);
    expect(await (await p.get('/system/secrets?namespace=elsewhere')).json()).toEqual([{ name: 'only-there', namespace: 'elsewhere' }]);
    // and an update that was refused left the function as it was: no env, no limits, no secrets
    const f2 = (await (await p.get('/system/function/exists')).json()) as Record<string, unknown>;
    expect([f2.envVars ?? {}, f2.limits, f2.requests, f2.secrets ?? []]).toEqual([{}, undefined, undefined, []]);
  });
});
