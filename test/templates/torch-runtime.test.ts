/**
 * The ml-inference-torch runtime (templates/ml-inference-torch) as a real child process on a
 * fast two-input model: endpoints, stdout lines, v1 and the Open Inference Protocol (JSON and the
 * binary extension), dynamic batching, bad input. Lifecycle, timeouts and the token gate are in
 * torch-lifecycle.test.ts.
 */
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { getJson } from './image-layout';
import { TINY_HANDLER, TorchFunction, layoutTorchImage, send, startTorch, tinyExpected } from './torch-helpers';

const X = [[0.5, -1, 2, 0.25], [-3, 0, 1, 1]];
const xIn = { name: 'x', shape: [2, 4], datatype: 'FP32', data: X.flat() as unknown[] };
const K = [[2, 3], [-1, 4]];
const kIn = { name: 'k', shape: [2, 2], datatype: 'INT64', data: K as unknown[] };
const v2Body = (extra: object = {}): { inputs: any[]; [k: string]: unknown } => ({
  id: 'req-1',
  inputs: [xIn, kIn],
  ...extra,
});

describe('ml-inference-torch: endpoints and protocols', () => {
  let t: TorchFunction;
  const socketPath = path.join(os.tmpdir(), `torch-rt-${process.pid}.sock`);
  beforeAll(async () => {
    const env = { MLFAAS_FUNCTION_NAME: 'tiny', MAX_BATCH_SIZE: '8', MAX_BODY_BYTES: '200000', MLFAAS_SOCKET: socketPath };
    t = await startTorch(layoutTorchImage({ 'handler.py': TINY_HANDLER }), env);
  }, 90_000);
  afterAll(() => {
    t?.stop();
    fs.rmSync(socketPath, { force: true });
  });

  test('announces listening and ready on stdout, with the model signature', () => {
    const listening = t.fn.json().find((l) => l.type === 'listening');
    expect(listening).toMatchObject({ type: 'listening', host: '127.0.0.1', pid: expect.any(Number) });
    expect(t.ready).toMatchObject({
      type: 'ready', input: 'x', shape: ['batch', 4], outputs: ['y', 'positive', 'ksum'], maxBatchSize: 8, tokenGate: 'none',
      handler: true, device: 'cpu', warmedUp: true,
    });
  });

  test('health, ready, stats and GET /', async () => {
    expect(await getJson(`${t.base}/_/health`)).toEqual({ status: 'ok' });
    expect(await getJson(`${t.base}/_/ready`)).toEqual({ status: 'ready' });
    const stats = await getJson(`${t.base}/_/stats`);
    const fields = ['requests', 'instances', 'batches', 'errors', 'timeouts', 'meanBatchSize', 'lastBatchSize', 'batchLatencyMs', 'queueLength',
      'inFlightBatch'];
    for (const k of [...fields, 'ready', 'draining']) {
      expect(stats).toHaveProperty(k);
    }
    const d = await getJson(t.base);
    expect(d.model).toMatchObject({ input: 'x', shape: ['batch', 4], outputs: ['y', 'positive', 'ksum'] });
  });

  test('also serves on MLFAAS_SOCKET (the local provider\'s way in), announced on the listening line', async () => {
    expect(t.fn.json().find((l) => l.type === 'listening').socket).toBe(socketPath);
    const body = JSON.stringify(v2Body());
    const answer = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = http.request({ socketPath, path: '/v2/models/tiny/infer', method: 'POST', headers: { 'Content-Length': Buffer.byteLength(body) } }, (res) => {
        let text = '';
        res.on('data', (c) => { text += c; });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      });
      req.on('error', reject);
      req.end(body);
    });
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.text).outputs.map((o: { name: string }) => o.name)).toEqual(['y', 'positive', 'ksum']);
  });

  test('v1: instances as {input: array} objects answer each output per instance, as torch computes', async () => {
    const r = await send(`${t.base}/function/tiny`, { instances: X.map((x, i) => ({ x, k: K[i] })) });
    expect(r.status).toBe(200);
    expect(r.body.predictions).toEqual(X.map((x, i) => tinyExpected(x, K[i])));
    expect(Number(r.headers.get('x-batch-size'))).toBe(2);
    expect(Number(r.headers.get('x-batch-latency-ms'))).toBeGreaterThanOrEqual(0);
    expect(r.headers.get('x-queue-ms')).not.toBeNull();
  });

  test('v1: an INT64 input keeps all 64 bits; a fraction for it is 400', async () => {
    const res = await fetch(`${t.base}/function/tiny`, { method: 'POST', body: '{"instances":[{"x":[0,0,0,0],"k":[9007199254740993,0]}]}' });
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('"ksum": 9007199254740993');
    const bad = await send(`${t.base}/function/tiny`, { instances: [{ x: [0, 0, 0, 0], k: [1.5, 0] }] });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toMatch(/instance 0, input 'k': INT64 values must be integers/);
  });

  test('v2: metadata, health, readiness; any model name is served under the function name', async () => {
    expect(await getJson(`${t.base}/v2/health/live`)).toEqual({ live: true });
    expect(await getJson(`${t.base}/v2/health/ready`)).toEqual({ ready: true });
    expect((await getJson(`${t.base}/v2`)).extensions).toContain('binary_tensor_data');
    const meta = await getJson(`${t.base}/v2/models/whatever`);
    expect(meta).toEqual({
      name: 'tiny', versions: ['1'], platform: 'pytorch_torchscript',
      inputs: [{ name: 'x', datatype: 'FP32', shape: [-1, 4] }, { name: 'k', datatype: 'INT64', shape: [-1, 2] }],
      outputs: [
        { name: 'y', datatype: 'FP32', shape: [-1, 4] }, { name: 'positive', datatype: 'BOOL', shape: [-1] }, { name: 'ksum', datatype: 'INT64', shape: [-1] },
      ],
    });
    expect(await getJson(`${t.base}/v2/models/tiny/versions/1/ready`)).toEqual({ name: 'tiny', ready: true });
    const r = await fetch(`${t.base}/v2/models/tiny/versions/7`);
    expect(r.status).toBe(404);
    expect(((await r.json()) as { error: string }).error).toMatch(/version '7'/);
  });

  test('v2 infer (JSON): outputs, datatypes, shapes and the id, equal to the model\'s own answer', async () => {
    const r = await send(`${t.base}/v2/models/tiny/infer`, v2Body());
    expect(r.status).toBe(200);
    const want = X.map((x, i) => tinyExpected(x, K[i]));
    expect(r.body).toEqual({
      model_name: 'tiny', model_version: '1', id: 'req-1',
      outputs: [
        { name: 'y', datatype: 'FP32', shape: [2, 4], data: want.flatMap((w) => w.y) },
        { name: 'positive', datatype: 'BOOL', shape: [2], data: want.map((w) => w.positive) },
        { name: 'ksum', datatype: 'INT64', shape: [2], data: want.map((w) => w.ksum) },
      ],
    });
    expect(Number(r.headers.get('x-batch-size'))).toBe(2);
  });

  test('v2 infer: an outputs selection answers only those outputs', async () => {
    const r = await send(`${t.base}/v2/models/tiny/infer`, v2Body({ outputs: [{ name: 'ksum' }] }));
    expect(r.status).toBe(200);
    expect(r.body.outputs).toEqual([{ name: 'ksum', datatype: 'INT64', shape: [2], data: [5, 3] }]);
  });

  test('v2 infer with the binary tensor extension, in and out', async () => {
    const header = Buffer.from(JSON.stringify({
      inputs: [
        { name: 'x', shape: [2, 4], datatype: 'FP32', parameters: { binary_data_size: 32 } },
        { name: 'k', shape: [2, 2], datatype: 'INT64', parameters: { binary_data_size: 32 } },
      ],
      outputs: [{ name: 'y', parameters: { binary_data: true } }, { name: 'ksum', parameters: { binary_data: false } }],
    }));
    const body = Buffer.concat([header, Buffer.from(new Float32Array(X.flat()).buffer), Buffer.from(new BigInt64Array(K.flat().map(BigInt)).buffer)]);
    const res = await fetch(`${t.base}/v2/models/tiny/infer`, {
      method: 'POST', body, headers: { 'Content-Type': 'application/octet-stream', 'Inference-Header-Content-Length': String(header.length) },
    });
    expect(res.status).toBe(200);
    const raw = Buffer.from(await res.arrayBuffer());
    const hlen = Number(res.headers.get('inference-header-content-length'));
    const doc = JSON.parse(raw.subarray(0, hlen).toString());
    expect(doc.outputs).toEqual([
      { name: 'y', datatype: 'FP32', shape: [2, 4], parameters: { binary_data_size: 32 } },
      { name: 'ksum', datatype: 'INT64', shape: [2], data: [5, 3] },
    ]);
    const y = new Float32Array(raw.subarray(hlen).buffer.slice(raw.byteOffset + hlen, raw.byteOffset + hlen + 32));
    expect(Array.from(y)).toEqual(X.map((x, i) => tinyExpected(x, K[i])).flatMap((w) => w.y));
  });

  test('two concurrent requests form one batch of 2 (BATCH_TIMEOUT_MS holds the first for the second)', async () => {
    const b = await startTorch(layoutTorchImage({ 'handler.py': TINY_HANDLER }), { BATCH_TIMEOUT_MS: '5000', MAX_BATCH_SIZE: '2', REPORT_INTERVAL_MS: '1' });
    try {
      const one = (i: number) => send(`${b.base}/v2/models/tiny/infer`, {
        inputs: [{ name: 'x', shape: [1, 4], datatype: 'FP32', data: X[i] }, { name: 'k', shape: [1, 2], datatype: 'INT64', data: K[i] }],
      });
      const [r0, r1] = await Promise.all([one(0), one(1)]);
      for (const [i, r] of [r0, r1].entries()) {
        expect(r.status).toBe(200);
        expect(r.headers.get('x-batch-size')).toBe('2');
        expect(r.body.outputs[2].data).toEqual([tinyExpected(X[i], K[i]).ksum]);
      }
      const stats = await getJson(`${b.base}/_/stats`);
      expect(stats).toMatchObject({ batches: 1, instances: 2, lastBatchSize: 2 });
      // the batch report line on stdout (REPORT_INTERVAL_MS=1: one per batch past the first millisecond)
      const report = JSON.parse(await b.fn.waitForLine((l) => l.includes('"batches"'), 10_000));
      expect(report).toMatchObject({ type: 'batches', batches: 1, meanBatchSize: 2, queueLength: 0 });
      // a batch the model refuses because of one request is rerun request by request: the other is answered
      const bad = send(`${b.base}/v2/models/tiny/infer`, {
        inputs: [{ name: 'x', shape: [1, 4], datatype: 'FP32', data: [13, 0, 0, 0] }, { name: 'k', shape: [1, 2], datatype: 'INT64', data: [1, 1] }],
      });
      const [good, refused] = await Promise.all([one(0), bad]);
      expect(good.status).toBe(200);
      expect(good.body.outputs[2].data).toEqual([tinyExpected(X[0], K[0]).ksum]);
      expect(refused.status).toBe(400);
      expect(refused.body.error).toMatch(/the model rejected the input: 13 is unlucky/);
    } finally {
      b.stop();
    }
  }, 90_000);

  test.each([
    { name: 'invalid JSON', body: '{"inputs": [', want: /not valid JSON/ },
    { name: 'JSON nested 100000 deep', body: '{"inputs": ' + '['.repeat(100_000), want: /not valid JSON/ },
    { name: 'a shape whose product overflows int64', body: { inputs: [{ ...xIn, shape: [2 ** 40, 2 ** 40] }, kIn] }, want: /input 'x': data has 8 values/ },
    { name: 'no inputs', body: {}, want: /^inputs: want a non-empty array/ },
    { name: 'unknown input name', body: { inputs: [{ name: 'z', shape: [1], datatype: 'FP32', data: [1] }] }, want: /inputs\[0\]\.name: 'z' is not an input/ },
    { name: 'a missing input', body: { inputs: [xIn] }, want: /input 'k' is missing/ },
    { name: 'a wrong datatype', body: { inputs: [{ ...xIn, datatype: 'FP64' }, kIn] }, want: /input 'x': datatype FP64 does not match the model's FP32/ },
    { name: 'an unknown datatype', body: { inputs: [{ ...xIn, datatype: 'FLOAT' }, kIn] }, want: /input 'x': datatype 'FLOAT' is not one of/ },
    { name: 'a wrong shape', body: { inputs: [{ ...xIn, shape: [2, 5], data: [...X.flat(), 0, 0] }, kIn] }, want: /input 'x': shape \[2, 5\] does not match/ },
    { name: 'data shorter than the shape', body: { inputs: [{ ...xIn, data: [1, 2] }, kIn] }, want: /input 'x': data has 2 values; shape \[2, 4\] needs 8/ },
    { name: 'a string in FP32 data', body: { inputs: [{ ...xIn, data: [1, 2, 3, 'x', 5, 6, 7, 8] }, kIn] }, want: /input 'x': value 3/ },
    { name: 'a fraction in INT64 data', body: { inputs: [xIn, { ...kIn, data: [1, 2.5, 3, 4] }] }, want: /input 'k': INT64 data must be integers/ },
    { name: 'batch sizes that disagree', body: { inputs: [xIn, { ...kIn, shape: [1, 2], data: [1, 2] }] }, want: /batch size/ },
    { name: 'an unknown output', body: v2Body({ outputs: [{ name: 'nope' }] }), want: /outputs: 'nope' is not an output/ },
    { name: 'a non-string id', body: v2Body({ id: 5 }), want: /^id: want a string/ },
  ])('v2 400 for $name, naming the field', async ({ body, want }) => {
    const r = await send(`${t.base}/v2/models/tiny/infer`, body);
    expect(r.status).toBe(400);
    expect(typeof r.body.error).toBe('string');
    expect(r.body.error).toMatch(want);
  });

  test('v2: a binary_data_size past the body is 400, not a hang', async () => {
    const header = Buffer.from(JSON.stringify({ inputs: [{ name: 'x', shape: [1, 4], datatype: 'FP32', parameters: { binary_data_size: 64 } }] }));
    const body = Buffer.concat([header, Buffer.alloc(16)]);
    const r = await send(`${t.base}/v2/models/tiny/infer`, body, { 'Inference-Header-Content-Length': String(header.length) });
    expect(r.status).toBe(400);
    expect(r.body.error).toMatch(/input 'x': parameters.binary_data_size 64/);
  });

  test.each([
    { name: 'invalid JSON', body: '{"instances": [', want: /not valid JSON/ },
    { name: 'JSON nested 100000 deep', body: '['.repeat(100_000), want: /not valid JSON/ },
    { name: 'no instances', body: { foo: 1 }, want: /want a JSON body/ },
    { name: 'empty instances', body: { instances: [] }, want: /empty/ },
    { name: 'an instance without an input', body: { instances: [{ x: X[0] }] }, want: /instance 0: input 'k' is missing/ },
    { name: 'a wrong length', body: { instances: [{ x: [1, 2, 3], k: K[0] }] }, want: /instance 0, input 'x': has shape \[3\]/ },
    { name: 'a non-number', body: { instances: [{ x: [1, 2, 'a', 4], k: K[0] }] }, want: /instance 0, input 'x'/ },
    { name: 'an unknown input', body: { instances: [{ x: X[0], k: K[0], z: 1 }] }, want: /instance 0: 'z' is not an input/ },
  ])('v1 400 bad_input for $name', async ({ body, want }) => {
    const r = await send(`${t.base}/function/tiny`, body);
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('bad_input');
    expect(r.body.error.message).toMatch(want);
  });

  test('a GET on infer and a DELETE on v1 are 405; an unknown /v2 path is 404', async () => {
    expect((await fetch(`${t.base}/v2/models/tiny/infer`)).status).toBe(405);
    expect((await fetch(`${t.base}/function/tiny`, { method: 'DELETE' })).status).toBe(405);
    expect((await fetch(`${t.base}/v2/nothing`)).status).toBe(404);
  });

  test('POST /_/profile runs closed-loop batches of zeros through the batcher; bad parameters are 400 naming them', async () => {
    const r = await send(`${t.base}/_/profile`, { batch: 4, seconds: 0.3 });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ batch: 4, batches: expect.any(Number), instancesPerSec: expect.any(Number), latencyMsP50: expect.any(Number) });
    expect(r.body.batches).toBeGreaterThan(0);
    expect((await getJson(`${t.base}/_/stats`)).lastBatchSize).toBe(4);
    const cases = [[{ batch: 0 }, /^batch: 0 must be/], [{ seconds: 11 }, /^seconds: 11 must be/], ['nope', /profile body must be JSON/]] as const;
    for (const [body, want] of cases) {
      const bad = await send(`${t.base}/_/profile`, body);
      expect(bad.status).toBe(400);
      expect(bad.body.error.message).toMatch(want);
    }
  });

  test('a chunked request body (Transfer-Encoding: chunked) is read, and a bad chunk size is 400', async () => {
    const raw = (body: string) => new Promise<string>((resolve, reject) => {
      const s = net.connect(Number(new URL(t.base).port), '127.0.0.1', () => {
        s.write(`POST /v2/models/tiny/infer HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n${body}`);
      });
      let got = '';
      s.on('data', (c) => { got += c.toString(); });
      s.on('close', () => resolve(got));
      s.on('error', reject);
    });
    const json = JSON.stringify(v2Body());
    const half = Math.floor(json.length / 2);
    const chunk = (x: string) => `${Buffer.byteLength(x).toString(16)}\r\n${x}\r\n`;
    const ok = await raw(`${chunk(json.slice(0, half))}${chunk(json.slice(half))}0\r\n\r\n`);
    expect(ok).toMatch(/^HTTP\/1\.1 200/);
    expect(ok).toContain('"ksum"');
    const bad = await raw('zz\r\nxx\r\n0\r\n\r\n');
    expect(bad).toMatch(/^HTTP\/1\.1 400/);
    expect(bad).toContain('chunk size');
  });

  test('a body over MAX_BODY_BYTES is 413, v1 and v2', async () => {
    const big = JSON.stringify({ instances: [{ x: new Array(120_000).fill(1), k: [1, 1] }] });
    const v1 = await send(`${t.base}/function/tiny`, big);
    expect(v1.status).toBe(413);
    expect(v1.body.error).toMatchObject({ code: 'payload_too_large', message: expect.stringMatching(/MAX_BODY_BYTES/) });
    const v2 = await send(`${t.base}/v2/models/tiny/infer`, big);
    expect(v2.status).toBe(413);
    expect(v2.body.error).toMatch(/exceeds 200000 bytes/);
  });

  test('no 5xx was counted', async () => {
    expect((await getJson(`${t.base}/_/stats`)).errors).toBe(0);
  });
});
