/**
 * The bad-input probe for the Open Inference Protocol's endpoints (issue 25): every case has an
 * exact status; no 5xx, no hang; every 4xx is JSON `{"error": "..."}`, the gateway's naming the
 * field in `field` (and `code`), the runtime's naming the input or output in `error`. Real
 * gateway, real Redis, a real ml-inference replica of functions/digits-classify.
 */
import { join } from 'node:path';
import { buildFunction } from '../../cli/build';
import { readStack } from '../../cli/stack';
import { sendRaw } from '../fixtures/v2/cases';
import { seedImage } from '../helpers/images';
import { eventually, testGateway, testRedis, TestPlatform } from '../helpers/platform';
import { BODY_LIMIT_BYTES, overBodyLimit } from './bad-input/case';
import { V2_MODEL, V2BadCase, v2Cases } from './bad-input/cases-v2';

const ROOT = join(__dirname, '../..');
const CASES: V2BadCase[] = [
  ...v2Cases(),
  { name: 'infer: body over MLFAAS_MAX_BODY_BYTES', method: 'POST', path: `/v2/models/${V2_MODEL}/infer`, raw: overBodyLimit(), status: 413,
    code: 'payload_too_large', field: 'body' },
];

describe('bad input on the /v2 endpoints', () => {
  let redis: Awaited<ReturnType<typeof testRedis>>;
  let p: TestPlatform;
  beforeAll(async () => {
    redis = await testRedis();
    p = await testGateway(redis.url, { MLFAAS_MAX_BODY_BYTES: String(BODY_LIMIT_BYTES) });
    const stack = readStack(join(ROOT, 'stack.yml'));
    const fn = stack.functions.find((f) => f.name === 'digits-classify')!;
    buildFunction(fn, stack.file, p.cfg.templatesDir, p.images);
    seedImage(p.images, 'test/trainer:1', { 'index.js': 'process.exit(1)\n' }, { language: 'node', kind: 'training', mode: 'job', fprocess: 'node index.js' });
    const dep = { service: V2_MODEL, image: fn.image, labels: { 'com.openfaas.scale.min': '1' }, annotations: fn.annotations,
      envVars: { ORT_INTRA_OP_THREADS: '1' } };
    expect((await p.json('POST', '/system/functions', dep)).status).toBe(202);
    expect((await p.json('POST', '/system/functions', { service: 'trainer', image: 'test/trainer:1' })).status).toBe(202);
    const up = async () => (await p.gw.provider.endpoints({ name: V2_MODEL, namespace: 'openfaas-fn' })).some((r) => r.state === 'ready');
    expect(await eventually(up, 60_000, 200)).toBe(true);
  }, 90_000);
  afterAll(async () => {
    await p?.stop();
    await redis?.stop();
  });

  it(`has at least 120 cases (${CASES.length}) covering every /v2 endpoint of the HTTP API table`, () => {
    expect(CASES.length).toBeGreaterThanOrEqual(120);
    const endpoints: Array<[string, RegExp]> = [
      ['GET', /^\/v2\/health\/(live|ready)$/], ['GET', /^\/v2$/], ['GET', /^\/v2\/models\/[^/]+$/], ['GET', /^\/v2\/models\/[^/]+\/versions\/[^/]*\/ready$/],
      ['GET', /^\/v2\/models\/[^/]+\/ready$/], ['POST', /^\/v2\/models\/[^/]+\/infer$/], ['POST', /^\/v2\/models\/[^/]+\/versions\/[^/]+\/infer$/],
    ];
    const uncovered = endpoints.filter(([m, re]) => !CASES.some((c) => c.method === m && re.test(c.path))).map(([m, re]) => `${m} ${re.source}`);
    expect(uncovered).toEqual([]);
  });

  test.each(CASES)('$name → $status', async (c) => {
    const body = c.raw === undefined ? undefined : Buffer.from(c.raw);
    const res = await sendRaw(p.gw.url, c.method, c.path, { 'content-type': 'application/json', ...c.headers }, body, 10_000); // a hang fails the case
    const text = res.body.toString('utf8');
    expect(`${res.status} ${text.slice(0, 300)}`).toMatch(new RegExp(`^${c.status} `));
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    if (res.status < 400) return;
    const answer = JSON.parse(text) as { error: unknown; code?: string; field?: string };
    expect(typeof answer.error).toBe('string');
    expect((answer.error as string).length).toBeGreaterThan(5);
    if (c.mention !== undefined) expect(answer.error).toContain(c.mention);
    else expect({ code: answer.code, field: answer.field }).toEqual({ code: c.code, field: c.field });
  });

  it('still serves a good request after all of them', async () => {
    const good = { inputs: [{ name: 'pixels', datatype: 'FP32', shape: [1, 64], data: Array(64).fill(1) }] };
    const res = await p.json('POST', `/v2/models/${V2_MODEL}/infer`, good);
    expect(res.status).toBe(200);
    expect(((await res.json()) as { outputs: Array<{ name: string }> }).outputs.map((o) => o.name)).toContain('probabilities');
  });
});
