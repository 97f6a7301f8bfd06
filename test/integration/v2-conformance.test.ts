/**
 * The v2 conformance corpus (test/fixtures/v2, the requests Triton's and KServe's HTTP clients
 * send, byte for byte) through the gateway: `/v2/models/{function}/...` on a real gateway, real
 * Redis, real ml-inference replicas of the example functions digits-classify and text-encoder
 * (issue 25). Prints the conformance table; every case must pass. The model-independent cases
 * ('any') also run against the PyTorch runtime's example (functions/resnet-torch) where
 * /usr/bin/python3 has torch.
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { buildFunction } from '../../cli/build';
import { readStack } from '../../cli/stack';
import { formatTable, loadCases, runCase, sendRaw } from '../fixtures/v2/cases';
import { eventually, testGateway, testRedis, TestPlatform } from '../helpers/platform';

const ROOT = join(__dirname, '../..');
const MODELS = ['digits-classify', 'text-encoder'];
const hasTorch = (() => {
  try {
    execFileSync('/usr/bin/python3', ['-c', 'import torch, torchvision'], { stdio: 'ignore', timeout: 60_000 });
    return true;
  } catch {
    return false;
  }
})();

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

  (hasTorch ? it : it.skip)('answers the model-independent cases on the PyTorch runtime (resnet-torch) too', async () => {
    const stack = readStack(join(ROOT, 'stack.yml'));
    const fn = stack.functions.find((f) => f.name === 'resnet-torch')!;
    buildFunction(fn, stack.file, p.cfg.templatesDir, p.images);
    const labels = { 'com.openfaas.scale.min': '0', 'com.openfaas.scale.max': '1' };
    const dep = { service: 'resnet-torch', image: fn.image, labels, annotations: fn.annotations };
    expect((await p.json('POST', '/system/functions', dep)).status).toBe(202);
    // scaled to zero: ready (the first request wakes it); the metadata request below wakes it
    const woke = await p.get('/v2/models/resnet-torch');
    expect(woke.status).toBe(200);
    // one real inference, the image as binary tensor data (Triton's client's default)
    const meta = (await woke.json()) as { inputs: Array<{ name: string; datatype: string; shape: number[] }> };
    const input = meta.inputs[0];
    const shape = input.shape.map((d) => (d < 0 ? 1 : d));
    const bytes = shape.reduce((a, b) => a * b, 1) * 4;
    const header = Buffer.from(JSON.stringify({ inputs: [{ name: input.name, datatype: 'FP32', shape, parameters: { binary_data_size: bytes } }] }));
    const infer = await sendRaw(p.gw.url, 'POST', '/v2/models/resnet-torch/infer', { 'Inference-Header-Content-Length': String(header.length) },
      Buffer.concat([header, Buffer.alloc(bytes)]));
    expect(infer.status).toBe(200);
    expect((JSON.parse(infer.body.toString()) as { outputs: unknown[] }).outputs.length).toBeGreaterThan(0);
    const rows = [];
    for (const c of loadCases().filter((x) => x.model === 'any')) rows.push(await runCase(p.gw.url, c, 'resnet-torch'));
    process.stdout.write(`\nv2 conformance through the gateway, PyTorch runtime:\n${formatTable(rows)}\n`);
    expect(rows.filter((r) => !r.ok).map((r) => `${r.name}: ${r.problems.join('; ')}`)).toEqual([]);
  }, 180_000);
});
