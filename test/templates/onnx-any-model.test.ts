/**
 * templates/ml-inference serves any ONNX model (issue 25, part 2): named inputs and outputs of every
 * Open Inference Protocol datatype through the worker-thread session, dynamic axes, batching along
 * axis 0 only between requests whose other dims agree and only where the model has a batch axis,
 * errors that name the input. Models are built here with onnx-proto (test/templates/onnx-models.ts).
 * Batching is asserted by mechanism: a token gate that holds the first run while the others queue.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fixedOneModel, fixedTwoModel, gatherModel, heldGate, identityAll, noBatchModel, reduceAllModel, seqModel, tmpDir } from './onnx-models';

const T = path.join(__dirname, '..', '..', 'templates', 'ml-inference');
/* eslint-disable @typescript-eslint/no-require-imports */
const { Model } = require(path.join(T, 'model.js'));
const { Batcher } = require(path.join(T, 'batcher.js'));
const { Stats } = require(path.join(T, 'stats.js'));
const { defaultPostprocess } = require(path.join(T, 'codec.js'));
/* eslint-enable @typescript-eslint/no-require-imports */

type Tensor = { datatype: string; shape: number[]; data: any };

/** The model, wrapped to record the input shapes of every run. */
function recording(model: any) {
  const runs: Array<Record<string, number[]>> = [];
  return {
    runs,
    model: {
      info: model.info,
      run: (inputs: Record<string, Tensor>) => {
        runs.push(Object.fromEntries(Object.entries(inputs).map(([k, t]) => [k, t.shape])));
        return model.run(inputs);
      },
    },
  };
}

const int64 = (rows: number[][]): Tensor => ({ datatype: 'INT64', shape: [rows.length, rows[0].length], data: rows.flat() });

describe('ml-inference: any ONNX model', () => {
  const dir = tmpDir();
  const models: any[] = [];
  const load = async (file: string) => {
    const m = await Model.load(file, { intraOpThreads: 1 });
    models.push(m);
    return m;
  };
  const batcher = (model: any, gate: any = heldGate(), maxBatchSize = 8) =>
    new Batcher({ model, gate, stats: new Stats(), maxBatchSize, batchTimeoutMs: 0 });
  // a worker session is unref'd: keep the loop alive while a test awaits it
  const keep = setInterval(() => undefined, 1000);
  afterAll(async () => {
    clearInterval(keep);
    for (const m of models) if (m.session.close) await m.session.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('every datatype goes in and comes out unchanged through the worker thread', async () => {
    const m = await load(identityAll(dir));
    expect(m.info.batchable).toBe(true);
    const values: Record<string, unknown[]> = {
      BOOL: [true, false, true, true], INT8: [-128, 0, 1, 127], INT16: [-32768, 2, 3, 32767], INT32: [-2147483648, 5, 6, 2147483647],
      INT64: ['-9223372036854775808', 9007199254740991, '9007199254740993', 7], UINT8: [0, 1, 2, 255], UINT16: [0, 1, 2, 65535],
      UINT32: [0, 1, 2, 4294967295], UINT64: ['18446744073709551615', 1, 2, 3], FP16: [0.5, -2, 65504, 0.0999755859375],
      FP32: [1.5, -2.25, 0, 3.4e38], FP64: [Math.PI, -1e300, 0, 1], BYTES: ['a', 'héllo', '', 'x y'],
    };
    const inputs: Record<string, Tensor> = {};
    for (const [dt, v] of Object.entries(values)) inputs[`x_${dt}`] = { datatype: dt, shape: [2, 2], data: v };
    const b = batcher(m, { acquire: async () => undefined, release: () => undefined });
    const r = await b.infer(inputs);
    const dtypes = require(path.join(T, 'dtypes.js')); // eslint-disable-line @typescript-eslint/no-require-imports
    for (const [dt, v] of Object.entries(values)) {
      const out = r.outputs[`y_${dt}`];
      expect(out.datatype).toBe(dt);
      expect(out.shape).toEqual([2, 2]);
      // floats come back as the shortest decimal that reads back as the same value (3.4e38 for float32's 3.3999999521443642e38,
      // 65500 and 0.1 for the halves 65504 and 0.0999755859375)
      if (dt === 'FP16') expect(dtypes.toJson(dt, out.data).map(dtypes.toHalf)).toEqual(v.map(dtypes.toHalf));
      else expect(dtypes.toJson(dt, out.data)).toEqual(v);
    }
    // typed arrays cross the worker as themselves (by tag: jest's realm has its own constructors)
    const tag = (x: unknown) => Object.prototype.toString.call(x);
    expect(tag(r.outputs.y_INT64.data)).toBe('[object BigInt64Array]');
    expect(tag(r.outputs.y_UINT64.data)).toBe('[object BigUint64Array]');
    expect(tag(r.outputs.y_FP16.data)).toBe('[object Uint16Array]');
    expect(dtypes.isArrayFor('INT64', r.outputs.y_INT64.data)).toBe(true);
  });

  test('requests concatenate along axis 0 only when their sequence lengths agree', async () => {
    const m = await load(seqModel(dir));
    expect(m.info).toMatchObject({ batchable: true, fixedBatch: 0, platform: 'onnxruntime_onnx' });
    expect(m.info.inputs).toEqual([
      { name: 'input_ids', datatype: 'INT64', shape: [-1, -1], symbols: ['batch', 'seq'] },
      { name: 'attention_mask', datatype: 'INT64', shape: [-1, -1], symbols: ['batch', 'seq'] },
    ]);
    const gate = heldGate();
    const rec = recording(m);
    const b = batcher(rec.model, gate);
    const req = (seq: number, v: number) => b.infer({ input_ids: int64([Array(seq).fill(v)]), attention_mask: int64([Array(seq).fill(1)]) });
    const first = req(4, 0);
    await gate.held;
    const rest = [req(3, 10), req(5, 20), req(3, 30), req(5, 40)];
    gate.open();
    const [r0, r1, r2, r3, r4] = await Promise.all([first, ...rest]);
    expect(rec.runs.map((x) => x.input_ids)).toEqual([[1, 4], [2, 3], [2, 5]]);
    expect([r0, r1, r2, r3, r4].map((r) => r.batchSize)).toEqual([1, 2, 2, 2, 2]);
    expect(Array.from(r3.outputs.sum.data, Number)).toEqual([31, 31, 31]);
    expect(r3.outputs.sum.shape).toEqual([1, 3]);
    expect(Array.from(r4.outputs.count.data, Number)).toEqual([5]);
    expect(typeof r1.queueMs).toBe('number');
  });

  test("the caller's typed arrays stay usable (only the runtime's own buffers move to the worker)", async () => {
    const m = models[1];
    const b = batcher(m, { acquire: async () => undefined, release: () => undefined });
    const ids = new BigInt64Array([1n, 2n, 3n]);
    const mask = new BigInt64Array([1n, 1n, 1n]);
    const [r1, r2] = await Promise.all([
      b.infer({ input_ids: { datatype: 'INT64', shape: [1, 3], data: ids }, attention_mask: { datatype: 'INT64', shape: [1, 3], data: mask } }),
      b.infer({ input_ids: int64([[7, 8, 9]]), attention_mask: int64([[0, 0, 0]]) }),
    ]);
    expect(Array.from(ids)).toEqual([1n, 2n, 3n]);
    expect(ids.buffer.byteLength).toBe(24);
    expect(Array.from(r1.outputs.sum.data, Number)).toEqual([2, 3, 4]);
    expect(Array.from(r2.outputs.sum.data, Number)).toEqual([7, 8, 9]);
    const t = (data: BigInt64Array) => ({ datatype: 'INT64', shape: [1, 3], data });
    const alone = await b.infer({ input_ids: t(ids), attention_mask: t(mask) });
    expect(Array.from(alone.outputs.count.data, Number)).toEqual([3]);
    expect(mask.buffer.byteLength).toBe(24);
    // what is transferred: arrays the runtime allocated, whole (a slice of one is copied), of at least
    // OWN_MIN_BYTES (a small one is cheaper to clone than to track)
    const { own, transferList, OWN_MIN_BYTES } = require(path.join(T, 'tensors.js')); // eslint-disable-line @typescript-eslint/no-require-imports
    const n = OWN_MIN_BYTES / 4;
    const mine = own(new Float32Array(n));
    const small = own(new Float32Array(n - 1));
    const slice = own(new Float32Array(2 * n)).subarray(0, n);
    const list = transferList([{ data: mine }, { data: mine.subarray(2) }, { data: slice }, { data: ids }, { data: small }]);
    expect(list).toEqual([mine.buffer]);
  });

  test('a request larger than MAX_BATCH_SIZE is split into runs and reassembled in order', async () => {
    const m = models[1] || (await load(seqModel(dir)));
    const rec = recording(m);
    const b = batcher(rec.model, { acquire: async () => undefined, release: () => undefined }, 2);
    const rows = [[1, 1], [2, 2], [3, 3], [4, 4], [5, 5]];
    const r = await b.infer({ input_ids: int64(rows), attention_mask: int64(rows.map(() => [0, 1])) }, { outputs: ['sum'] });
    expect(rec.runs.map((x) => x.input_ids[0])).toEqual([2, 2, 1]);
    expect(Object.keys(r.outputs)).toEqual(['sum']);
    expect(r.outputs.sum.shape).toEqual([5, 2]);
    expect(Array.from(r.outputs.sum.data, Number)).toEqual([1, 2, 2, 3, 3, 4, 4, 5, 5, 6]);
  });

  test('a model without a batch axis runs each request alone', async () => {
    const m = await load(noBatchModel(dir));
    expect(m.info).toMatchObject({ batchable: false, fixedBatch: 0 });
    const gate = heldGate();
    const rec = recording(m);
    const b = batcher(rec.model, gate);
    const req = (v: number) => b.infer({ x: { datatype: 'FP32', shape: [3], data: [v, v, v] } });
    const first = req(1);
    await gate.held;
    const rest = [req(2), req(3)];
    gate.open();
    const rs = await Promise.all([first, ...rest]);
    expect(rec.runs).toEqual([{ x: [3] }, { x: [3] }, { x: [3] }]);
    expect(rs.map((r) => r.batchSize)).toEqual([1, 1, 1]);
    expect(Array.from(rs[2].outputs.y.data)).toEqual([6, 6, 6]);
  });

  test('a model that fixes axis 0 at 1 gets one run per row of a larger request', async () => {
    const m = await load(fixedOneModel(dir));
    expect(m.info).toMatchObject({ batchable: false, fixedBatch: 1, legacy: true });
    const rec = recording(m);
    const b = batcher(rec.model, { acquire: async () => undefined, release: () => undefined });
    const r = await b.infer({ x: { datatype: 'FP32', shape: [3, 4], data: Array.from({ length: 12 }, (_, i) => i) } });
    expect(rec.runs).toEqual([{ x: [1, 4] }, { x: [1, 4] }, { x: [1, 4] }]);
    expect(r.outputs.y.shape).toEqual([3, 4]);
    expect(Array.from(r.outputs.y.data, (v: number) => v + 0)).toEqual(Array.from({ length: 12 }, (_, i) => (i === 0 ? 0 : -i)));
    await expect(b.infer({ x: { datatype: 'FP32', shape: [2, 3], data: [1, 2, 3, 4, 5, 6] } })).rejects.toMatchObject({ status: 400 });
  });

  test('a model that fixes axis 0 at 2 takes multiples of 2 rows, alike on every input', async () => {
    const m = await load(fixedTwoModel(dir));
    expect(m.info).toMatchObject({ batchable: false, fixedBatch: 2, legacy: false });
    const rec = recording(m);
    const b = batcher(rec.model, { acquire: async () => undefined, release: () => undefined });
    const rows = (n: number, v: number) => ({ datatype: 'FP32', shape: [n, 3], data: Array(n * 3).fill(v) });
    const r = await b.infer({ a: rows(4, 1), b: rows(4, 2) });
    expect(rec.runs).toEqual([{ a: [2, 3], b: [2, 3] }, { a: [2, 3], b: [2, 3] }]);
    expect(r.outputs.c.shape).toEqual([4, 3]);
    expect(Array.from(r.outputs.c.data)).toEqual(Array(12).fill(3));
    await expect(b.infer({ a: rows(4, 1), b: rows(2, 2) })).rejects.toMatchObject({ status: 400, message: expect.stringMatching(/input 'b': axis 0 is 2/) });
    await expect(b.infer({ a: rows(3, 1), b: rows(3, 2) })).rejects.toMatchObject({ status: 400, message: expect.stringMatching(/input 'a'.*dim 0 is 2/) });
  });

  test('an output without the batch axis makes the model not batchable', async () => {
    const m = await load(reduceAllModel(dir));
    expect(m.info).toMatchObject({ batchable: false, fixedBatch: 0 });
    const b = batcher(m, { acquire: async () => undefined, release: () => undefined });
    const r = await b.infer({ x: { datatype: 'FP32', shape: [2, 4], data: [1, 1, 1, 1, 2, 2, 2, 2] } });
    expect(r.outputs.total).toMatchObject({ shape: [] });
    expect(Array.from(r.outputs.total.data)).toEqual([12]);
  });

  test('one request the model fails on does not fail the others batched with it; it gets a 400', async () => {
    const m = await load(gatherModel(dir));
    const gate = heldGate();
    const rec = recording(m);
    const b = batcher(rec.model, gate);
    const req = (ids: number[]) => b.infer({ ids: { datatype: 'INT64', shape: [ids.length], data: ids } });
    const first = req([0]);
    await gate.held;
    const good1 = req([1, 2]);
    const bad = req([7]).then(() => null, (e: unknown) => e);
    const good2 = req([4]);
    gate.open();
    await first;
    expect(Array.from((await good1).outputs.rows.data)).toEqual([10, 11, 20, 21]);
    expect(Array.from((await good2).outputs.rows.data)).toEqual([40, 41]);
    expect(await bad).toMatchObject({ status: 400, code: 'model_rejected_input', message: expect.stringMatching(/ids\[1\]/) });
    expect(rec.runs.map((x) => x.ids[0])).toEqual([1, 4, 2, 1, 1]);
  });

  const I64 = (shape: number[], data: unknown) => ({ datatype: 'INT64', shape, data });
  const ids1 = int64([[1]]);
  test.each([
    ['a missing input', { input_ids: int64([[1]]) }, /input 'attention_mask' is missing/],
    ['an input the model does not have', { input_ids: int64([[1]]), attention_mask: int64([[1]]), extra: int64([[1]]) }, /input 'extra'.*no such input/],
    ['a wrong datatype', { input_ids: { datatype: 'INT32', shape: [1, 1], data: [1] }, attention_mask: int64([[1]]) }, /input 'input_ids'.*INT32.*INT64/],
    ['a wrong rank', { input_ids: { datatype: 'INT64', shape: [1], data: [1] }, attention_mask: int64([[1]]) }, /input 'input_ids'.*rank 1/],
    ['seq lengths that differ between inputs', { input_ids: int64([[1, 2]]), attention_mask: int64([[1, 1, 1]]) },
      /input 'attention_mask'.*'seq'.*3.*'input_ids' has 2/],
    ['batch sizes that differ between inputs', { input_ids: int64([[1], [2]]), attention_mask: ids1 },
      /input 'attention_mask': dim 0 \('batch'\) is 1, but input 'input_ids' has 2/],
    ['too few values for the shape', { input_ids: I64([1, 3], [1, 2]), attention_mask: int64([[1, 1, 1]]) }, /input 'input_ids': 2 values.*want 3/],
    ['a value that is not an integer', { input_ids: I64([1, 1], [1.5]), attention_mask: ids1 }, /input 'input_ids': element 0/],
    ['a string as data', { input_ids: I64([1, 1], 'x'), attention_mask: ids1 }, /input 'input_ids': data must be an array/],
    ['a negative dim', { input_ids: { datatype: 'INT64', shape: [-1, 1], data: [1] }, attention_mask: int64([[1]]) }, /input 'input_ids': shape must be/],
    ['zero rows', { input_ids: I64([0, 1], []), attention_mask: I64([0, 1], []) }, /axis 0.*is 0/],
  ])('400 naming the input for %s', async (_name, inputs, message) => {
    const m = models.find((x) => x.info.inputs[0].name === 'input_ids');
    const b = batcher(m, { acquire: async () => undefined, release: () => undefined });
    const err = await b.infer(inputs).then(() => null, (e: any) => e);
    expect(err).toMatchObject({ status: 400, code: 'bad_input' });
    expect(err.message).toMatch(message);
  });

  test('400 for an output the model does not have', async () => {
    const m = models.find((x) => x.info.inputs[0].name === 'input_ids');
    const b = batcher(m, { acquire: async () => undefined, release: () => undefined });
    await expect(b.infer({ input_ids: int64([[1]]), attention_mask: int64([[1]]) }, { outputs: ['nope'] }))
      .rejects.toMatchObject({ status: 400, message: expect.stringMatching(/output 'nope'/) });
  });

  test('v1: instances are objects of nested arrays per input; INT64 outputs answer as JSON numbers', async () => {
    const m = models.find((x) => x.info.inputs[0].name === 'input_ids');
    expect(m.info.legacy).toBe(false);
    const b = batcher(m, { acquire: async () => undefined, release: () => undefined });
    const raw = [{ input_ids: [1, 2, 3], attention_mask: [1, 1, 0] }, { input_ids: [5, 6], attention_mask: [1, 1] }];
    const instances = raw.map((x, i) => m.toInstance(x, i));
    const r = await b.submit(instances);
    const outputs = Object.fromEntries(Object.entries(r.outputs).map(([k, v]: [string, any]) => [k, v.rows]));
    const predictions = defaultPostprocess(outputs, raw, { labels: null, outputDims: {}, model: m.info });
    expect(JSON.parse(JSON.stringify(predictions))).toEqual([{ sum: [2, 3, 3], count: [2] }, { sum: [6, 7], count: [2] }]);
    expect(() => m.toInstance({ input_ids: [1, 2] }, 3)).toThrow(/instance 3, input 'attention_mask' is missing/);
    expect(() => m.toInstance({ input_ids: [[1], [2, 3]], attention_mask: [1] }, 0)).toThrow(/instance 0, input 'input_ids': ragged/);
    expect(() => m.toInstance([1, 2], 0)).toThrow(/must be an object/);
  });

  test('v1: a single-input float32 model still takes flat arrays (and the Float32Array run used before issue 25)', async () => {
    const m = models.find((x) => x.info.inputs[0].name === 'x' && x.info.fixedBatch === 1);
    const inst = m.toInstance([1, 2, 3, 4], 0);
    expect(inst).toBeInstanceOf(Float32Array);
    const out = await m.run([inst]);
    expect(Array.from(out.y.data)).toEqual([-1, -2, -3, -4]);
  });
});

describe('ml-inference: any ONNX model, session on the main thread (ORT_IN_WORKER=0)', () => {
  // in a plain node process: jest's sandbox has typed array constructors of its own, which onnxruntime's checks reject
  test('every datatype round-trips there too', () => {
    const dir = tmpDir();
    const script = `
      const { Model } = require(${JSON.stringify(path.join(T, 'model.js'))});
      (async () => {
        const m = await Model.load(${JSON.stringify(identityAll(dir))}, { intraOpThreads: 1 });
        const inputs = m.zeroInputs(1);
        inputs.x_INT64.data = new BigInt64Array([2n ** 62n]);
        inputs.x_BYTES.data = [Buffer.from('bü')];
        inputs.x_FP16.data = new Uint16Array([0x3c00]);
        const out = await m.run(inputs);
        console.log(JSON.stringify({ int64: String(out.y_INT64.data[0]), bytes: out.y_BYTES.data, fp16: Array.from(out.y_FP16.data),
          shapes: Object.values(out).map((t) => t.shape.join('x')), types: Object.values(out).map((t) => t.datatype) }));
      })().catch((e) => { console.error(e); process.exit(1); });`;
    try {
      const r = spawnSync(process.execPath, ['-e', script], { env: { ...process.env, ORT_IN_WORKER: '0' }, encoding: 'utf8', timeout: 60_000 });
      expect(r.stderr).toBe('');
      const got = JSON.parse(r.stdout.trim().split('\n').pop() as string);
      expect(got).toMatchObject({ int64: String(2n ** 62n), bytes: ['bü'], fp16: [0x3c00] });
      expect(new Set(got.shapes)).toEqual(new Set(['1x1']));
      expect(got.types).toHaveLength(13);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
