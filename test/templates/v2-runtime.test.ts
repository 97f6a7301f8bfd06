/**
 * The Open Inference Protocol on the ml-inference runtime beyond the client corpus (issue 25):
 * the name and version it reports, batching headers and concurrent v2 requests sharing a batch,
 * v1 and v2 answering the same numbers, methods and unknown endpoints, and the stats counters.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { sendRaw } from '../fixtures/v2/cases';
import { FunctionProcess, freePort, layoutImage, removeImage, repoRoot, startFunction, waitFor200 } from './image-layout';

const digit: number[] = JSON.parse(fs.readFileSync(path.join(repoRoot, 'functions/digits-classify/digit.json'), 'utf8')).instances[0];
const JSON_HEADERS = { 'Content-Type': 'application/json' };
const infer = (rows: number, extra: Record<string, unknown> = {}) => Buffer.from(JSON.stringify({
  inputs: [{ name: 'pixels', shape: [rows, 64], datatype: 'FP32', data: Array.from({ length: rows }, () => digit) }], ...extra,
}));
const parse = (b: Buffer) => JSON.parse(b.toString('utf8'));

describe('ml-inference /v2 with MLFAAS_FUNCTION_NAME and MLFAAS_MODEL_VERSION', () => {
  let fn: FunctionProcess;
  let dir: string;
  let base: string;
  beforeAll(async () => {
    dir = layoutImage('ml-inference', 'functions/digits-classify', ['data']);
    const port = await freePort();
    fn = startFunction(dir, { PORT: String(port), MAX_BATCH_SIZE: '8', MLFAAS_FUNCTION_NAME: 'digits', MLFAAS_MODEL_VERSION: 'abc123' });
    base = `http://127.0.0.1:${port}`;
    await waitFor200(`${base}/_/ready`, 30_000);
  }, 40_000);
  afterAll(() => {
    fn.kill();
    removeImage(dir);
  });

  test('metadata reports the function name and version whatever name the path has', async () => {
    const r = await sendRaw(base, 'GET', '/v2/models/anything', {});
    expect(parse(r.body)).toMatchObject({ name: 'digits', versions: ['abc123'], platform: 'onnxruntime_onnx' });
    expect((await sendRaw(base, 'GET', '/v2/models/digits/versions/abc123', {})).status).toBe(200);
    expect((await sendRaw(base, 'GET', '/v2/models/digits/versions/1', {})).status).toBe(404);
  });

  test('the ready line describes every tensor', async () => {
    const want = { inputs: [{ name: 'pixels', datatype: 'FP32', shape: [-1, 64] }], outputs: [{ name: 'probabilities', datatype: 'FP32', shape: [-1, 10] }] };
    expect(JSON.parse(await fn.waitForLine((l) => l.includes('"type":"ready"'), 10_000)).tensors).toEqual(want);
  });

  test('the answer names model and version, echoes the id and carries the batch headers', async () => {
    const r = await sendRaw(base, 'POST', '/v2/models/digits/versions/abc123/infer', JSON_HEADERS, infer(3, { id: 'req-9' }));
    expect(r.status).toBe(200);
    const doc = parse(r.body);
    expect(doc).toMatchObject({ model_name: 'digits', model_version: 'abc123', id: 'req-9' });
    expect(doc.outputs[0]).toMatchObject({ name: 'probabilities', datatype: 'FP32', shape: [3, 10] });
    expect(Number(r.headers['x-batch-size'])).toBeGreaterThanOrEqual(3);
    expect(Number(r.headers['x-batch-latency-ms'])).toBeGreaterThan(0);
    expect(r.headers['x-queue-ms']).toBeDefined();
  });

  test('v1 and v2 answer the same probabilities for the same digit', async () => {
    const v1 = await sendRaw(base, 'POST', '/', JSON_HEADERS, Buffer.from(JSON.stringify({ instances: [digit] })));
    const v2 = parse((await sendRaw(base, 'POST', '/v2/models/digits/infer', JSON_HEADERS, infer(1))).body);
    const p1 = parse(v1.body).predictions[0];
    const probs: number[] = v2.outputs[0].data;
    expect(probs.indexOf(Math.max(...probs))).toBe(p1.index ?? digitLabelFromV1(p1));
    expect(Math.max(...probs)).toBeCloseTo(p1.probability ?? p1.score, 3); // the handler rounds to 4 places
  });

  test('concurrent v2 requests share a batch (up to 5 bursts of 16)', async () => {
    let biggest = 0;
    for (let burst = 0; burst < 5 && biggest <= 1; burst++) {
      const replies = await Promise.all(Array.from({ length: 16 }, () => sendRaw(base, 'POST', '/v2/models/digits/infer', JSON_HEADERS, infer(1))));
      for (const r of replies) {
        expect(r.status).toBe(200);
        biggest = Math.max(biggest, Number(r.headers['x-batch-size']));
      }
    }
    expect(biggest).toBeGreaterThan(1);
  }, 30_000);

  test.each([
    ['GET', '/v2/models/digits/infer', 405], ['POST', '/v2/models/digits', 405], ['POST', '/v2/health/live', 405],
    ['GET', '/v2/models/digits/config', 404], ['GET', '/v2/repository/index', 404],
  ])('%s %s: %d with {"error"}', async (method, p, status) => {
    const r = await sendRaw(base, method, p, {}, method === 'POST' ? infer(1) : undefined);
    expect(r.status).toBe(status);
    expect(typeof parse(r.body).error).toBe('string');
  });

  test('Content-Encoding the runtime cannot undo: 400 naming the header', async () => {
    const r = await sendRaw(base, 'POST', '/v2/models/digits/infer', { 'Content-Encoding': 'br' }, infer(1));
    expect(r.status).toBe(400);
    expect(parse(r.body).error).toContain('Content-Encoding');
  });

  test('a body over MAX_BODY_BYTES after gzip: 413 in the v2 form', async () => {
    // 64 MiB of zeros compress to ~64 KiB; the decoded body is over the limit
    const zlib = await import('node:zlib');
    const huge = zlib.gzipSync(Buffer.alloc(64 * 1024 * 1024 + 10, 0x20));
    const r = await sendRaw(base, 'POST', '/v2/models/digits/infer', { 'Content-Encoding': 'gzip' }, huge);
    expect(r.status).toBe(413);
    expect(typeof parse(r.body).error).toBe('string');
  }, 30_000);

  test('/_/stats counts v2 requests and has timeouts', async () => {
    const before = parse((await sendRaw(base, 'GET', '/_/stats', {})).body);
    await sendRaw(base, 'POST', '/v2/models/digits/infer', JSON_HEADERS, infer(1));
    const after = parse((await sendRaw(base, 'GET', '/_/stats', {})).body);
    expect(after.requests).toBe(before.requests + 1);
    expect(after.timeouts).toBe(0);
  });
});

function digitLabelFromV1(p: { label: string }): number {
  return Number(p.label);
}
