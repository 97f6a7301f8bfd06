/**
 * Data-parallel and elastic training in the ml-training harness: the all-reduce step equals a
 * single-worker step on the global batch, jobs resume with another worker count and global batch
 * from the same (epoch, offset), SIGTERM with n workers writes one checkpoint in the grace period.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { FunctionProcess, layoutImage, removeImage, repoRoot, startFunction } from './image-layout';

const T = path.join(repoRoot, 'templates/ml-training');
/* eslint-disable @typescript-eslint/no-require-imports */
const nn = require(path.join(T, 'nn.js'));
const { splitDataset } = require(path.join(T, 'trainer.js'));
const { DataParallel } = require(path.join(T, 'parallel.js'));
const { epochOrder } = require(path.join(T, 'allreduce.js'));
const gns = require(path.join(T, 'gns.js'));
const digitsFile = path.join(repoRoot, 'functions/digits-train/train.js');
const digits = require(digitsFile);
/* eslint-enable @typescript-eslint/no-require-imports */
const digitsCsv = path.join(repoRoot, 'functions/digits-train/data/digits.csv');
const TRAIN = 1438; // digits rows minus the 20 % held out

test.each([
  { model: 'softmax', params: 650 },
  { model: 'mlp', params: 2410 },
  { model: 'mlp-wide', params: 64 * 256 + 256 + 256 * 10 + 10 },
])('digits-train MODEL=$model has $params parameters', ({ model, params }) => {
  expect(digits.createModel(model, { nn, inputSize: 64, numClasses: 10, seed: 0 }).params).toHaveLength(params);
});

describe('all-reduce step (worker threads) equals one step on the global batch', () => {
  const data = digits.loadDataset(digitsCsv, { nn });
  const split = splitDataset(data, 0.2, 0);
  const reference = digits.createModel('mlp', { nn, inputSize: 64, numClasses: 10, seed: 0 });
  const init = Float32Array.from(reference.params);
  const engines = new Map<number, any>();
  const engine = async (n: number) => {
    if (!engines.has(n)) {
      engines.set(n, await DataParallel.start({ workers: n, handlerFile: digitsFile, modelName: 'mlp', seed: 0, numClasses: 10, train: split.train,
        params: init }));
    }
    return engines.get(n);
  };
  afterAll(async () => {
    for (const e of engines.values()) await e.close();
  });

  /** params after one plain SGD step on examples [offset, offset + batch) of epoch 0's order */
  function singleWorkerStep(offset: number, batch: number, lr: number) {
    const idx: number[] = epochOrder(TRAIN, 0, 0).slice(offset, offset + batch);
    reference.params.set(init);
    const g = new Float32Array(init.length);
    const out = reference.gradient(idx.map((i) => split.train.x[i]), idx.map((i) => split.train.y[i]), g);
    return { params: init.map((p, i) => p - lr * g[i]), loss: out.loss, count: idx.length };
  }

  test.each([
    { name: '1 worker, batch 32', n: 1, batch: 32, offset: 0 },
    { name: '2 workers × 16', n: 2, batch: 32, offset: 0 },
    { name: '4 workers × 8', n: 4, batch: 32, offset: 64 },
    { name: '4 workers, batch 10 (2, 3, 2, 3)', n: 4, batch: 10, offset: 0 },
    { name: '3 workers × ~10.7', n: 3, batch: 32, offset: 320 },
    { name: "4 workers, the epoch's short last batch (8 left)", n: 4, batch: 32, offset: TRAIN - 8 },
  ])('$name', async ({ n, batch, offset }) => {
    const dp = await engine(n);
    dp.params.set(init);
    const r = await dp.run({ epoch: 0, offset, globalBatch: batch, learningRate: 0.1, maxSteps: 1 });
    const want = singleWorkerStep(offset, batch, 0.1);
    expect(r).toMatchObject({ steps: 1, offset: offset + want.count, count: want.count, stopped: false });
    expect(r.lossSum).toBeCloseTo(want.loss, 9);
    let maxDiff = 0;
    for (let i = 0; i < init.length; i++) maxDiff = Math.max(maxDiff, Math.abs(dp.params[i] - want.params[i]));
    expect(maxDiff).toBeLessThan(1e-6);
    expect(dp.params).toHaveLength(init.length); // every parameter was compared
    if (n > 1) {
      // the workers' gradients were all-reduced: a step on worker 0's shard alone lands elsewhere
      const own = singleWorkerStep(offset, Math.floor(want.count / n), 0.1);
      let toOwn = 0;
      for (let i = 0; i < init.length; i++) toOwn = Math.max(toOwn, Math.abs(dp.params[i] - own.params[i]));
      expect(toOwn).toBeGreaterThan(1e-4);
    }
    // a step moved the weights (the comparison is not vacuous)
    expect(want.params.some((p: number, i: number) => Math.abs(p - init[i]) > 1e-4)).toBe(true);
  });

  test('a whole epoch with 4 workers tracks 1 worker closely; the noise terms are per step', async () => {
    const one = await engine(1);
    const four = await engine(4);
    one.params.set(init);
    four.params.set(init);
    const a = await one.run({ epoch: 0, offset: 0, globalBatch: 32, learningRate: 0.1 });
    const b = await four.run({ epoch: 0, offset: 0, globalBatch: 32, learningRate: 0.1 });
    expect(a).toMatchObject({ steps: 45, offset: TRAIN, count: TRAIN, gnsSteps: 0 });
    expect(b).toMatchObject({ steps: 45, offset: TRAIN, count: TRAIN, gnsSteps: 45 });
    expect(b.lossSum).toBeCloseTo(a.lossSum, 3);
    let maxDiff = 0;
    for (let i = 0; i < init.length; i++) maxDiff = Math.max(maxDiff, Math.abs(one.params[i] - four.params[i]));
    expect(maxDiff).toBeLessThan(1e-4);
    expect(b.gnsTrace).toBeGreaterThan(0);
  });
});

describe('data-parallel gradient noise scale on a model with a known answer', () => {
  // ½|w − x|² with x = μ + unit Gaussian noise in 4 dimensions: tr(Σ) = 4; w − μ = (0.5, …) gives
  // |G|² = 1, so φ = 4. lr = 0 keeps w fixed, so every step estimates the same φ.
  const d = 4;
  const N = 8192;
  const rand = nn.rng(7);
  const gauss = () => Math.sqrt(-2 * Math.log(1 - rand())) * Math.cos(2 * Math.PI * rand());
  const train = { x: Array.from({ length: N }, () => Float32Array.from({ length: d }, () => 1 + gauss())), y: new Array(N).fill(0) };
  // the finite sample's own moments are the truth the estimator sees
  const mean = Array.from({ length: d }, (_, i) => train.x.reduce((a, x) => a + x[i], 0) / N);
  const trace = mean.reduce((a, m, i) => a + train.x.reduce((b, x) => b + (x[i] - m) ** 2, 0) / (N - 1), 0);
  const w = Float32Array.from({ length: d }, () => 1.5);
  const gradSq = mean.reduce((a, m, i) => a + (w[i] - m) ** 2, 0);

  test.each([
    { workers: 2, batch: 64 },
    { workers: 4, batch: 32 },
    { workers: 4, batch: 30 }, // uneven shards 7, 8, 7, 8
  ])('$workers workers, global batch $batch: φ within 15 % of tr(Σ)/|G|²', async ({ workers, batch }) => {
    const dp = await DataParallel.start({
      workers, handlerFile: path.join(repoRoot, 'test/templates/training/quadratic/train.js'), modelName: 'quadratic', seed: 0,
      numClasses: 1, train, params: w,
    });
    try {
      const r = await dp.run({ epoch: 0, offset: 0, globalBatch: batch, learningRate: 0 });
      expect(r.gnsSteps).toBe(Math.floor(N / batch) + (N % batch >= workers ? 1 : 0));
      expect(r.gnsGradSq / r.gnsSteps).toBeGreaterThan(0.8 * gradSq);
      expect(r.gnsGradSq / r.gnsSteps).toBeLessThan(1.2 * gradSq);
      const phi = gns.noiseScaleFromSums({ gradSqSum: r.gnsGradSq, traceSum: r.gnsTrace, steps: r.gnsSteps });
      expect(Math.abs(phi / (trace / gradSq) - 1)).toBeLessThan(0.15);
      expect(Array.from(dp.params)).toEqual(Array.from(w)); // lr 0: no update
    } finally {
      await dp.close();
    }
  });
});

describe('elastic ml-training jobs on digits-train', () => {
  const dirs: string[] = [];
  const procs: FunctionProcess[] = [];
  afterAll(() => {
    for (const p of procs) p.kill();
    for (const d of dirs) removeImage(d);
  });
  function fresh(handler = 'functions/digits-train'): { image: string; ckpt: string } {
    const image = layoutImage('ml-training', handler);
    const ckpt = fs.mkdtempSync(path.join(os.tmpdir(), 'mlfaas-ckpt-'));
    dirs.push(image, ckpt);
    return { image, ckpt };
  }
  function run(image: string, ckpt: string, env: Record<string, string>): FunctionProcess {
    const fn = startFunction(image, { CHECKPOINT_DIR: ckpt, ...env });
    procs.push(fn);
    return fn;
  }
  const progressOf = (fn: FunctionProcess) => fn.json().filter((l) => l.type === 'progress');

  /** Train until the `epoch`-th progress line, SIGTERM, and return what the job saved. */
  async function trainThenStop(image: string, ckpt: string, env: Record<string, string>, epoch: number) {
    const fn = run(image, ckpt, { EPOCHS: '100000', CHECKPOINT_EVERY: '1000', ...env });
    await fn.waitForLine((l) => l.includes('"type":"progress"') && l.includes(`"epoch":${epoch},`), 30_000);
    const t0 = Date.now();
    fn.child.kill('SIGTERM');
    const exit = await fn.exited;
    const exitMs = Date.now() - t0;
    expect(exit.code).toBe(0);
    const signal = fn.json().filter((l) => l.type === 'checkpoint' && l.reason === 'signal');
    expect(signal).toHaveLength(1);
    const saved = signal[0];
    expect(fn.json().find((l) => l.type === 'stopped')).toMatchObject({ reason: 'SIGTERM', epoch: saved.epoch, offset: saved.offset, step: saved.step });
    const doc = JSON.parse(fs.readFileSync(saved.path, 'utf8'));
    const last = progressOf(fn).at(-1);
    return { fn, saved, doc, last, exitMs };
  }

  test('1 → 4 workers with the global batch co-adapted 32 → 64 (lr scaled linearly): same position, still improving', async () => {
    const { image, ckpt } = fresh();
    const { saved, doc, last } = await trainThenStop(image, ckpt, { WORKERS: '1', BATCH_SIZE: '32' }, 3);
    expect(doc).toMatchObject({ version: 2, workers: 1, globalBatch: 32, localBatch: 32, learningRate: 0.1, epoch: saved.epoch, offset: saved.offset,
      step: saved.step });
    expect(saved.epoch).toBeGreaterThanOrEqual(3);

    const env = { WORKERS: '4', BATCH_SIZE: '64', BASE_BATCH_SIZE: '32', BASE_LEARNING_RATE: '0.1', EPOCHS: String(saved.epoch + 3) };
    const second = run(image, ckpt, env);
    expect((await second.exited).code).toBe(0);
    const start = second.json().find((l) => l.type === 'start');
    expect(start).toMatchObject({ workers: 4, globalBatch: 64, localBatch: 16, learningRate: 0.2 });
    expect(start.resumedFrom).toMatchObject({ file: saved.path, epoch: saved.epoch, offset: saved.offset, step: saved.step, workers: 1, globalBatch: 32 });
    const progress = progressOf(second);
    expect(progress.map((p) => p.epoch)).toEqual([saved.epoch + 1, saved.epoch + 2, saved.epoch + 3]);
    // No example skipped or repeated: the resumed epoch ends exactly at (epoch + 1) × TRAIN examples,
    // after the rest of the epoch in batches of 64.
    expect(progress[0].samples).toBe(TRAIN * (saved.epoch + 1));
    expect(progress[0].step).toBe(saved.step + Math.ceil((TRAIN - saved.offset) / 64));
    expect(progress[1].step).toBe(progress[0].step + Math.ceil(TRAIN / 64));
    for (const p of progress) {
      expect(p).toMatchObject({ workers: 4, globalBatch: 64, localBatch: 16, learningRate: 0.2, gnsMethod: 'data-parallel', baseBatch: 32 });
      expect(p.gradNoiseScale).toBeGreaterThan(0);
      expect(p.statEfficiency).toBeCloseTo((p.gradNoiseScale + 32) / (p.gradNoiseScale + 64), 3);
    }
    // Still improving after the change (the stop lands a few epochs in, where the loss falls fast).
    const end = progress.at(-1);
    expect(end.loss).toBeLessThan(last.loss);
    expect(end.testLoss).toBeLessThan(last.testLoss);
    expect(end.accuracy).toBeGreaterThanOrEqual(last.accuracy - 2 / 359);
  });

  test('4 → 2 workers: the 4-worker checkpoint resumes at its offset and ends where an uninterrupted 1-worker job does', async () => {
    const { image, ckpt } = fresh();
    const { saved, doc, last } = await trainThenStop(image, ckpt, { WORKERS: '4', BATCH_SIZE: '32' }, 2);
    expect(doc).toMatchObject({ version: 2, workers: 4, globalBatch: 32, localBatch: 8, offset: saved.offset });
    const epochs = saved.epoch + 2;
    const second = run(image, ckpt, { WORKERS: '2', BATCH_SIZE: '32', EPOCHS: String(epochs) });
    expect((await second.exited).code).toBe(0);
    expect(second.json().find((l) => l.type === 'start').resumedFrom).toMatchObject({ epoch: saved.epoch, offset: saved.offset, workers: 4, globalBatch: 32 });
    const progress = progressOf(second);
    expect(progress[0]).toMatchObject({ workers: 2, localBatch: 16, samples: TRAIN * (saved.epoch + 1), step: 45 * (saved.epoch + 1) });
    expect(progress.at(-1).testLoss).toBeLessThan(last.testLoss);

    // Same global batch and seed, no interruption, one worker: the same trajectory up to float rounding.
    const other = fresh();
    const straight = run(other.image, other.ckpt, { WORKERS: '1', BATCH_SIZE: '32', EPOCHS: String(epochs) });
    expect((await straight.exited).code).toBe(0);
    const a = second.json().find((l) => l.type === 'done');
    const b = straight.json().find((l) => l.type === 'done');
    expect(a.samples).toBe(b.samples);
    expect(a.testLoss).toBeCloseTo(b.testLoss, 3);
    expect(Math.abs(a.accuracy - b.accuracy)).toBeLessThanOrEqual(2 / 359); // at most two held-out digits differ
  });

  test('SIGTERM with 4 workers: all stop at one step, one checkpoint, exit 0 within the grace period', async () => {
    const { image, ckpt } = fresh();
    const { saved, exitMs } = await trainThenStop(image, ckpt, { WORKERS: '4', BATCH_SIZE: '64', CHECKPOINT_GRACE_MS: '5000' }, 2);
    expect(exitMs).toBeLessThan(5000);
    expect(saved.workers).toBe(4);
    const files = fs.readdirSync(ckpt).filter((f) => /^ckpt-\d+\.json$/.test(f));
    expect(files).toContain(path.basename(saved.path));
    expect(fs.readdirSync(ckpt).filter((f) => f.includes('.tmp-'))).toEqual([]);
  });

  test('a version-1 checkpoint (minibatch index, one worker) resumes at batch × BATCH_SIZE with 2 workers', async () => {
    const { image, ckpt } = fresh();
    const params = Float32Array.from(digits.createModel('mlp', { nn, inputSize: 64, numClasses: 10, seed: 0 }).params);
    const v1 = {
      version: 1, step: 55, epoch: 1, batch: 10, samples: TRAIN + 320, partial: { lossSum: 0, correct: 0, count: 0, trainMs: 0 },
      model: 'mlp', seed: 0, paramCount: params.length, reason: 'signal', savedAt: new Date().toISOString(),
      params: Buffer.from(params.buffer).toString('base64'),
    };
    fs.writeFileSync(path.join(ckpt, 'ckpt-000000055.json'), JSON.stringify(v1));
    const fn = run(image, ckpt, { WORKERS: '2', BATCH_SIZE: '32', EPOCHS: '2' });
    expect((await fn.exited).code).toBe(0);
    expect(fn.json().find((l) => l.type === 'start').resumedFrom).toMatchObject({ epoch: 1, offset: 320, step: 55, workers: 1, globalBatch: 32 });
    expect(progressOf(fn)).toEqual([expect.objectContaining({ epoch: 2, samples: 2 * TRAIN, step: 55 + Math.ceil((TRAIN - 320) / 32) })]);
  });

  test('a worker thread that fails ends the job with exit 1 and its message, not a hang', async () => {
    const { image, ckpt } = fresh('test/templates/training/worker-fails');
    const fn = run(image, ckpt, { WORKERS: '2', DATASET: digitsCsv, EPOCHS: '2' });
    expect((await fn.exited).code).toBe(1);
    expect(fn.stderr).toMatch(/worker \d: .*fixture: no model in worker threads/);
  });
});
