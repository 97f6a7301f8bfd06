/**
 * The v2 conformance corpus (test/fixtures/v2, the requests Triton's and KServe's HTTP clients
 * send, byte for byte) through the gateway: `/v2/models/{function}/...` on a real gateway, real
 * Redis, real ml-inference replicas of the example functions digits-classify and text-encoder
 * (issue 25). Prints the conformance table; every case must pass.
 */
import { join } from 'node:path';
import { buildFunction } from '../../cli/build';
import { readStack } from '../../cli/stack';
import { formatTable, loadCases, runCase } from '../fixtures/v2/cases';
import { eventually, testGateway, testRedis, TestPlatform } from '../helpers/platform';

const ROOT = join(__dirname, '../..');
const MODELS = ['digits-classify', 'text-encoder'];

describe('v2 conformance corpus through the gateway (real redis, real ml-inference replicas)', () => {
  let redis: Awaited<ReturnType<typeof testRedis>>;
  let p: TestPlatform;

  beforeAll(async () => {
    redis = await testRedis();
    p = await testGateway(redis.url);
    const stack = readStack(join(ROOT, 'stack.yml'));
    for (const name of MODELS) {
      const fn = stack.functions.find((f) => f.name === name)!;
      buildFunction(fn, stack.file, p.cfg.templatesDir, p.images);
      const dep = { service: name, image: fn.image, labels: { 'com.openfaas.scale.min': '1', 'com.openfaas.scale.max': '1' }, annotations: fn.annotations,
        envVars: { ORT_INTRA_OP_THREADS: '1' } };
      expect((await p.json('POST', '/system/functions', dep)).status).toBe(202);
    }
    for (const name of MODELS) {
      const up = async () => (await p.gw.provider.endpoints({ name, namespace: 'openfaas-fn' })).some((r) => r.state === 'ready');
      expect(await eventually(up, 60_000, 200)).toBe(true);
    }
  }, 120_000);
  afterAll(async () => {
    await p?.stop();
    await redis?.stop();
  });

  it('answers every case as the corpus expects', async () => {
    const rows = [];
    for (const c of loadCases()) rows.push(await runCase(p.gw.url, c, c.model === 'any' ? 'digits-classify' : c.model));
    process.stdout.write(`\nv2 conformance through the gateway:\n${formatTable(rows)}\n`);
    expect(rows.filter((r) => !r.ok).map((r) => `${r.name}: ${r.problems.join('; ')}`)).toEqual([]);
    expect(rows.length).toBeGreaterThanOrEqual(30);
  }, 120_000);
});
