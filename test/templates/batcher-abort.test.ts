/**
 * templates/ml-inference batcher.infer honours `opts.signal` (issue 25, B's request): a request whose
 * signal aborts while it is still queued leaves the queue and rejects (its rows never run); once its
 * run has begun the abort is ignored. Asserted by mechanism: a token gate holds the first run while
 * the others queue, and a recording model lists every run's input shapes and values.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { heldGate, seqModel, tmpDir } from './onnx-models';

const T = path.join(__dirname, '..', '..', 'templates', 'ml-inference');
/* eslint-disable @typescript-eslint/no-require-imports */
const { Model } = require(path.join(T, 'model.js'));
const { Batcher } = require(path.join(T, 'batcher.js'));
const { Stats } = require(path.join(T, 'stats.js'));
const { RuntimeError } = require(path.join(T, 'errors.js'));
/* eslint-enable @typescript-eslint/no-require-imports */

type Tensor = { datatype: string; shape: number[]; data: any };

const int64 = (rows: number[][]): Tensor => ({ datatype: 'INT64', shape: [rows.length, rows[0].length], data: rows.flat() });

describe('ml-inference batcher: abort while queued', () => {
  const dir = tmpDir();
  let model: any;
  const keep = setInterval(() => undefined, 1000); // the worker session is unref'd
  beforeAll(async () => {
    model = await Model.load(seqModel(dir), { intraOpThreads: 1 });
  });
  afterAll(async () => {
    clearInterval(keep);
    if (model && model.session.close) await model.session.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** A batcher over the model that records each run's first column of input_ids (one value per row). */
  function setup(gate: any, maxBatchSize = 8, batchTimeoutMs = 0) {
    const runs: number[][] = [];
    const rec = {
      info: model.info,
      run: (inputs: Record<string, Tensor>) => {
        const t = inputs.input_ids;
        const cols = t.shape[1];
        runs.push(Array.from({ length: t.shape[0] }, (_, i) => Number(t.data[i * cols])));
        return model.run(inputs);
      },
    };
    return { runs, b: new Batcher({ model: rec, gate, stats: new Stats(), maxBatchSize, batchTimeoutMs }) };
  }
  const req = (b: any, v: number, opts: object = {}, rows = 1) =>
    b.infer({ input_ids: int64(Array.from({ length: rows }, () => [v, v, v])), attention_mask: int64(Array.from({ length: rows }, () => [1, 1, 1])) }, opts);

  test('a queued request whose signal aborts leaves the queue, rejects with the reason, and the next batch runs without it', async () => {
    const gate = heldGate();
    const { runs, b } = setup(gate);
    const first = req(b, 1);
    await gate.held; // the first run waits for the gate; the next ones queue
    const ac = new AbortController();
    const aborted = req(b, 2, { signal: ac.signal });
    const other = req(b, 3);
    expect(b.queueLength).toBe(2);
    const reason = new RuntimeError('timeout', 504, 'exec_timeout passed');
    ac.abort(reason);
    await expect(aborted).rejects.toBe(reason);
    expect(b.queueLength).toBe(1);
    gate.open();
    const [r1, r3] = await Promise.all([first, other]);
    expect(runs).toEqual([[1], [3]]); // value 2 never ran
    expect(Array.from(r1.outputs.sum.data, Number)).toEqual([2, 2, 2]);
    expect(Array.from(r3.outputs.sum.data, Number)).toEqual([4, 4, 4]);
    expect(b.aborted).toBe(1);
    await b.idle();
  });

  test('an abort once the batch has begun is ignored: the request is answered', async () => {
    const gate = heldGate();
    const { runs, b } = setup(gate);
    const ac = new AbortController();
    const running = req(b, 5, { signal: ac.signal });
    await gate.held; // taken from the queue, waiting on the gate
    ac.abort(new Error('too late'));
    gate.open();
    const r = await running;
    expect(Array.from(r.outputs.sum.data, Number)).toEqual([6, 6, 6]);
    expect(runs).toEqual([[5]]);
    expect(b.aborted).toBe(0);
  });

  test('a signal aborted before infer rejects at once; a reason that is not an Error becomes a 504 timeout', async () => {
    const { runs, b } = setup({ acquire: async () => undefined, release: () => undefined });
    const ac = new AbortController();
    ac.abort('gone');
    await expect(req(b, 1, { signal: ac.signal })).rejects.toMatchObject({ code: 'timeout', status: 504 });
    const gate = heldGate();
    const s = setup(gate);
    const first = req(s.b, 1);
    await gate.held;
    const ac2 = new AbortController();
    const queued = req(s.b, 2, { signal: ac2.signal });
    ac2.abort();
    await expect(queued).rejects.toMatchObject({ code: 'timeout', status: 504 });
    gate.open();
    await first;
    expect(runs).toEqual([]);
    expect(s.runs).toEqual([[1]]);
  });

  test('a request split into several runs: every part still queued leaves with the abort', async () => {
    const gate = heldGate();
    const { runs, b } = setup(gate, 2);
    const first = req(b, 1);
    await gate.held;
    const ac = new AbortController();
    const big = req(b, 7, { signal: ac.signal }, 5); // 3 parts of at most 2 rows
    const after = req(b, 8);
    expect(b.queueLength).toBe(6);
    ac.abort(new Error('exec_timeout'));
    await expect(big).rejects.toThrow('exec_timeout');
    expect(b.queueLength).toBe(1);
    gate.open();
    await Promise.all([first, after]);
    expect(runs).toEqual([[1], [8]]);
    expect(b.aborted).toBe(3);
  });

  test('v1 submit takes the signal too: queued instances aborted leave the queue', async () => {
    const gate = heldGate();
    const { runs, b } = setup(gate);
    const first = req(b, 1);
    await gate.held;
    const ac = new AbortController();
    // two v1 instances (per-instance tensors of one row each) and one that is not aborted
    const inst = (v: number) => ({ input_ids: int64([[v, v, v]]), attention_mask: int64([[1, 1, 1]]) });
    const dropped = b.submit([inst(2), inst(3)], { signal: ac.signal });
    const kept = b.submit([inst(4)]);
    expect(b.queueLength).toBe(3);
    ac.abort(new RuntimeError('timeout', 504, 'exec_timeout passed'));
    await expect(dropped).rejects.toMatchObject({ status: 504 });
    gate.open();
    const [, k] = await Promise.all([first, kept]);
    expect(runs).toEqual([[1], [4]]);
    expect(Array.from(k.outputs.sum.rows[0], Number)).toEqual([5, 5, 5]);
  });

  test('v1 float32 instances of a one-input model (queued without a second validation) leave the queue on abort', async () => {
    const digits = await Model.load(path.join(__dirname, '..', '..', 'functions', 'digits-classify', 'model.onnx'), { intraOpThreads: 1 });
    try {
      expect(digits.info.legacy).toBe(true);
      const gate = heldGate();
      const runs: number[][] = [];
      const rec = {
        info: digits.info,
        run: (inputs: Record<string, Tensor>) => {
          const t = inputs.pixels;
          runs.push(Array.from({ length: t.shape[0] }, (_, i) => t.data[i * 64]));
          return digits.run(inputs);
        },
      };
      const b = new Batcher({ model: rec, gate, stats: new Stats(), maxBatchSize: 8, batchTimeoutMs: 0 });
      const inst = (v: number) => digits.toInstance(Array(64).fill(v), 0);
      const first = b.submit([inst(1)]);
      await gate.held;
      const ac = new AbortController();
      const dropped = b.submit([inst(2), inst(3)], { signal: ac.signal });
      const kept = b.submit([inst(4)], { signal: new AbortController().signal });
      ac.abort(new RuntimeError('timeout', 504, 'exec_timeout passed'));
      await expect(dropped).rejects.toMatchObject({ status: 504 });
      gate.open();
      const [, k] = await Promise.all([first, kept]);
      expect(runs).toEqual([[1], [4]]);
      expect(k.outputs.probabilities.rows).toHaveLength(1);
      const before = new AbortController();
      before.abort();
      await expect(b.submit([inst(5)], { signal: before.signal })).rejects.toMatchObject({ code: 'timeout' });
      expect(runs).toEqual([[1], [4]]);
    } finally {
      await digits.session.close();
    }
  });

  test('with BATCH_TIMEOUT_MS, a queue emptied by aborts during the wait ends the loop cleanly', async () => {
    const { runs, b } = setup({ acquire: async () => undefined, release: () => undefined }, 8, 1000);
    const ac = new AbortController();
    const only = req(b, 4, { signal: ac.signal });
    for (let i = 0; i < 3; i++) await new Promise((r) => setImmediate(r)); // the loop is in its 1 s wait for the batch to fill
    ac.abort(new Error('gone'));
    await expect(only).rejects.toThrow('gone');
    await b.idle();
    const later = await req(b, 9); // the batcher still serves
    expect(Array.from(later.outputs.sum.data, Number)).toEqual([10, 10, 10]);
    expect(runs).toEqual([[9]]);
  }, 20000);
});
