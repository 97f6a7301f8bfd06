/**
 * Conformance table (issue 25, part 1): every case of test/fixtures/v2 (the requests Triton's and
 * KServe's HTTP clients send, byte for byte, and bad ones) against a real ml-inference runtime
 * process serving the case's example model. Prints the table; fails on any non-conformant row.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CaseResult, checkReply, formatTable, loadCases, runCase } from '../fixtures/v2/cases';
import { FunctionProcess, freePort, layoutImage, removeImage, repoRoot, startFunction, waitFor200 } from './image-layout';

const MODELS = ['digits-classify', 'text-encoder'];

describe('Open Inference Protocol conformance (ml-inference runtime)', () => {
  const servers: Record<string, { fn: FunctionProcess; dir: string; base: string }> = {};
  const rows: CaseResult[] = [];

  beforeAll(async () => {
    await Promise.all(MODELS.map(async (m) => {
      const dir = layoutImage('ml-inference', `functions/${m}`, ['data']);
      const port = await freePort();
      const fn = startFunction(dir, { PORT: String(port), MAX_BATCH_SIZE: '8' });
      servers[m] = { fn, dir, base: `http://127.0.0.1:${port}` };
      await waitFor200(`http://127.0.0.1:${port}/_/ready`, 30_000);
    }));
  }, 60_000);

  afterAll(() => {
    for (const s of Object.values(servers)) {
      s.fn.kill();
      removeImage(s.dir);
    }
    // eslint-disable-next-line no-console
    if (rows.length > 0) console.log(`v2 conformance, ml-inference runtime\n\n${formatTable(rows)}`);
  });

  test('the corpus names only example models that exist', () => {
    for (const c of loadCases()) {
      if (c.model !== 'any') expect(MODELS).toContain(c.model);
    }
    for (const m of MODELS) expect(fs.existsSync(path.join(repoRoot, 'functions', m, 'model.onnx'))).toBe(true);
  });

  const cases = loadCases().flatMap((c) => (c.model === 'any' ? MODELS.map((m) => ({ c, m })) : [{ c, m: c.model }]));
  test.each(cases.map(({ c, m }) => [`${c.name} on ${m}`, c, m] as const))('%s', async (_label, c, m) => {
    const result = await runCase(servers[m].base, c, m);
    rows.push(result);
    expect(result.problems).toEqual([]);
  }, 30_000);

  test('the corpus has both clients, binary and JSON, and bad requests', () => {
    const all = loadCases();
    expect(all.filter((c) => c.client === 'tritonclient.http').length).toBeGreaterThanOrEqual(10);
    expect(all.filter((c) => c.client === 'kserve.InferenceRESTClient').length).toBeGreaterThanOrEqual(5);
    expect(all.filter((c) => c.request.headers['Inference-Header-Content-Length'] || c.request.headers['inference-header-content-length']).length)
      .toBeGreaterThanOrEqual(5);
    expect(all.filter((c) => c.expect.status >= 400).length).toBeGreaterThanOrEqual(10);
  });
});

describe('the conformance checker flags wrong answers', () => {
  const c = loadCases().find((x) => x.name === 'triton-json-in-binary-out')!;
  const reply = (status: number, doc: unknown, binary?: Buffer) => {
    const head = Buffer.from(JSON.stringify(doc));
    return { status, headers: binary ? { 'inference-header-content-length': String(head.length) } : {}, body: binary ? Buffer.concat([head, binary]) : head };
  };
  const probs = Buffer.from(new Float32Array([0, 0, 0, 0, 0, 0, 0, 0.9, 0.1, 0]).buffer);
  const good = { model_name: 'm', outputs: [{ name: 'probabilities', datatype: 'FP32', shape: [1, 10], parameters: { binary_data_size: 40 } }] };

  test('a right answer passes', () => {
    expect(checkReply(c, reply(200, good, probs), 'm')).toEqual([]);
  });
  test.each([
    ['wrong status', reply(500, { error: 'x' }), 'status 500'],
    ['JSON data where binary was asked',
      reply(200, { model_name: 'm', outputs: [{ name: 'probabilities', datatype: 'FP32', shape: [1, 10], data: [0, 0, 0, 0, 0, 0, 0, 1, 0, 0] }] }),
      'JSON data, want binary'],
    ['wrong argmax', reply(200, good, Buffer.from(new Float32Array([1, 0, 0, 0, 0, 0, 0, 0, 0, 0]).buffer)), 'argmax'],
    ['bytes missing', reply(200, good, probs.subarray(0, 20)), 'binary outputs claim'],
    ['wrong model_name', reply(200, { ...good, model_name: 'other' }, probs), 'model_name'],
    ['wrong shape', reply(200, { ...good, outputs: [{ ...good.outputs[0], shape: [10] }] }, probs), 'shape'],
  ])('%s', (_n, r, want) => {
    expect(checkReply(c, r, 'm').join('\n')).toContain(want);
  });
  test('an error answer must be {"error": string} naming the field', () => {
    const bad = loadCases().find((x) => x.name === 'bad-wrong-shape')!;
    expect(checkReply(bad, reply(400, { error: { code: 'bad_input', message: 'pixels' } }), 'm').join()).toContain('without {"error"');
    expect(checkReply(bad, reply(400, { error: 'shape is wrong' }), 'm').join()).toContain('does not name "pixels"');
  });
});
