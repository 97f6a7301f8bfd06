import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { FunctionProcess, layoutImage, removeImage, repoRoot, startFunction } from './image-layout';

// The harness is plain CommonJS; its pure parts are tested in-process.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const nn = require(path.join(repoRoot, 'templates/ml-training/nn.js'));
// eslint-disable-next-line @typescript-eslint/no-require-imports
const gns = require(path.join(repoRoot, 'templates/ml-training/gns.js'));
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { parseConfig } = require(path.join(repoRoot, 'templates/ml-training/config.js'));
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { shardRange, shardSizes } = require(path.join(repoRoot, 'templates/ml-training/allreduce.js'));
const { gradientNoiseScale } = gns;

describe('nn.mlp gradients', () => {
  test.each([
    { name: 'softmax regression', hidden: [] as number[] },
    { name: 'one hidden layer', hidden: [5] },
    { name: 'two hidden layers', hidden: [4, 3] },
  ])('match finite differences: $name', ({ hidden }) => {
    const rand = nn.rng(42);
    const model = nn.mlp({ inputSize: 6, hidden, numClasses: 4, seed: 1 });
    for (let i = 0; i < model.params.length; i++) model.params[i] += 0.01 * (rand() - 0.5); // non-zero biases
    const xs = Array.from({ length: 5 }, () => Float32Array.from({ length: 6 }, () => rand() * 2 - 1));
    const ys = [0, 1, 2, 3, 1];
    const grad = new Float32Array(model.params.length);
    model.gradient(xs, ys, grad);
    const meanLoss = () => model.evaluate(xs, ys).loss;
    const h = 1e-2;
    for (let i = 0; i < model.params.length; i += Math.max(1, Math.floor(model.params.length / 25))) {
      const keep = model.params[i];
      model.params[i] = keep + h;
      const up = meanLoss();
      model.params[i] = keep - h;
      const down = meanLoss();
      model.params[i] = keep;
      expect(grad[i]).toBeCloseTo((up - down) / (2 * h), 3);
    }
  });
});

describe('gradient noise scale (McCandlish et al. simple estimator)', () => {
  test('recovers tr(Σ)/|G|² from exact small- and big-batch expectations', () => {
    // True G = (3, 4): |G|² = 25; tr(Σ) = 50. Then E|G_B|² = |G|² + tr(Σ)/B.
    const bSmall = 10;
    const k = 8;
    const smallSq = 25 + 50 / bSmall;
    const bigSq = 25 + 50 / (bSmall * k);
    const s = Math.sqrt(bigSq / 25);
    const r = gradientNoiseScale({ sumSqNorms: smallSq * k, count: k, batchSize: bSmall, meanGrad: Float64Array.from([3 * s, 4 * s]) });
    expect(r.gradSq).toBeCloseTo(25, 9);
    expect(r.traceSigma).toBeCloseTo(50, 9);
    expect(r.gnsSimple).toBeCloseTo(2, 9);
  });

  test('is null with a single batch or when noise swamps the signal', () => {
    expect(gradientNoiseScale({ sumSqNorms: 4, count: 1, batchSize: 8, meanGrad: Float64Array.from([2]) }).gnsSimple).toBeNull();
    expect(gradientNoiseScale({ sumSqNorms: 2, count: 2, batchSize: 8, meanGrad: Float64Array.from([0]) }).gnsSimple).toBeNull();
  });

  test('data-parallel terms: per-worker shares add up to the two-batch estimate, unequal local batches included', () => {
    // |G|² = 25, tr(Σ) = 50; four workers with local batches 2, 3, 2, 3 (global 10).
    const sizes = [2, 3, 2, 3];
    const bBig = 10;
    const bSmall = sizes.length / sizes.reduce((a, b) => a + 1 / b, 0); // harmonic mean
    const smalls = sizes.map((b) => 25 + 50 / b); // E|g_i|²
    const big = 25 + 50 / bBig; // E|G_big|²
    const bigShares = [0.1, 0.4, 0.2, 0.3].map((f) => f * big); // chunks of the reduced gradient
    let gradSq = 0;
    let trace = 0;
    sizes.forEach((_, i) => {
      const t = gns.twoBatchTerms(smalls[i] / sizes.length, bigShares[i], bSmall, bBig);
      gradSq += t.gradSq;
      trace += t.traceSigma;
    });
    expect(gradSq).toBeCloseTo(25, 9);
    expect(trace).toBeCloseTo(50, 9);
    expect(gns.noiseScaleFromSums({ gradSqSum: 3 * gradSq, traceSum: 3 * trace, steps: 3 })).toBeCloseTo(2, 9);
    expect(gns.noiseScaleFromSums({ gradSqSum: -1, traceSum: 3, steps: 3 })).toBeNull();
    expect(gns.noiseScaleFromSums({ gradSqSum: 0, traceSum: 0, steps: 0 })).toBeNull();
  });

  // FaPES §4.3: Efficiency(φ, M) = (φ + M0)/(φ + M).
  test.each([
    { name: 'M = M0 is fully efficient', phi: 100, m: 32, m0: 32, want: 1 },
    { name: 'FaPES M0 = 1', phi: 99, m: 100, m0: 1, want: 100 / 199 },
    { name: 'noise scale far above M: near 1', phi: 1e6, m: 256, m0: 32, want: (1e6 + 32) / (1e6 + 256) },
    { name: 'smaller batch than M0: above 1', phi: 50, m: 16, m0: 32, want: 82 / 66 },
    { name: 'unknown φ', phi: null, m: 64, m0: 32, want: null },
  ])('statistical efficiency: $name', ({ phi, m, m0, want }) => {
    const got = gns.statisticalEfficiency(phi, m, m0);
    if (want === null) expect(got).toBeNull();
    else expect(got).toBeCloseTo(want, 12);
  });
});

describe('global batch, shards and learning-rate scaling', () => {
  const cfg = (env: Record<string, string | undefined>, defaults: Record<string, string | number> = { DATASET: 'd.csv', LEARNING_RATE: 0.1 }) =>
    parseConfig(env, defaults, '/img');

  test.each([
    { name: 'defaults', env: {}, want: { workers: 1, batchSize: 32, learningRate: 0.1, baseBatchSize: null } },
    { name: 'BATCH_SIZE is global', env: { WORKERS: '4', BATCH_SIZE: '64' }, want: { workers: 4, batchSize: 64, learningRate: 0.1 } },
    {
      name: 'linear scaling: lr = BASE_LEARNING_RATE × BATCH_SIZE / BASE_BATCH_SIZE',
      env: { BATCH_SIZE: '128', BASE_BATCH_SIZE: '32', BASE_LEARNING_RATE: '0.05' },
      want: { batchSize: 128, learningRate: 0.2, baseBatchSize: 32, baseLearningRate: 0.05 },
    },
    { name: 'BASE_BATCH_SIZE alone only sets M0', env: { BASE_BATCH_SIZE: '16' }, want: { learningRate: 0.1, baseBatchSize: 16 } },
  ])('$name', ({ env, want }) => {
    expect(cfg(env)).toMatchObject(want);
  });

  test.each([
    { name: 'fewer examples than workers', env: { WORKERS: '8', BATCH_SIZE: '4' }, msg: /BATCH_SIZE=4 with WORKERS=8/ },
    { name: 'too many workers', env: { WORKERS: '65' }, msg: /WORKERS="65"/ },
    { name: 'base rate without base batch', env: { BASE_LEARNING_RATE: '0.1' }, msg: /needs BASE_BATCH_SIZE/ },
    { name: 'both rates', env: { LEARNING_RATE: '0.3', BASE_BATCH_SIZE: '32', BASE_LEARNING_RATE: '0.1' }, msg: /set one/ },
  ])('refused: $name', ({ env, msg }) => {
    expect(() => cfg(env)).toThrow(msg);
  });

  test.each([
    { count: 32, n: 4, want: [8, 8, 8, 8] },
    { count: 10, n: 4, want: [2, 3, 2, 3] },
    { count: 8, n: 3, want: [2, 3, 3] },
    { count: 5, n: 1, want: [5] },
  ])('a batch of $count over $n workers: $want', ({ count, n, want }) => {
    expect(shardSizes(count, n)).toEqual(want);
    // contiguous and covering
    let at = 0;
    for (let r = 0; r < n; r++) {
      const [s, e] = shardRange(count, n, r);
      expect(s).toBe(at);
      at = e;
    }
    expect(at).toBe(count);
  });
});

describe('ml-training harness on digits-train', () => {
  const dirs: string[] = [];
  const procs: FunctionProcess[] = [];
  afterAll(() => {
    for (const p of procs) p.kill();
    for (const d of dirs) removeImage(d);
  });

  function run(image: string, ckpt: string, env: Record<string, string>): FunctionProcess {
    const fn = startFunction(image, { CHECKPOINT_DIR: ckpt, ...env });
    procs.push(fn);
    return fn;
  }
  function fresh(): { image: string; ckpt: string } {
    const image = layoutImage('ml-training', 'functions/digits-train');
    const ckpt = fs.mkdtempSync(path.join(os.tmpdir(), 'mlfaas-ckpt-'));
    dirs.push(image, ckpt);
    return { image, ckpt };
  }

  test('three epochs: loss falls, accuracy rises, progress lines are complete', async () => {
    const { image, ckpt } = fresh();
    const fn = run(image, ckpt, { EPOCHS: '3', BATCH_SIZE: '32', LEARNING_RATE: '0.1', MODEL: 'mlp' });
    expect((await fn.exited).code).toBe(0);
    const lines = fn.json();
    const start = lines.find((l) => l.type === 'start');
    expect(start).toMatchObject({
      model: 'mlp', parameters: 64 * 32 + 32 + 32 * 10 + 10, trainExamples: 1438, testExamples: 359, resumedFrom: null,
      workers: 1, globalBatch: 32, localBatch: 32, learningRate: 0.1,
    });
    const progress = lines.filter((l) => l.type === 'progress');
    expect(progress.map((p) => p.epoch)).toEqual([1, 2, 3]);
    for (const p of progress) {
      for (const k of ['loss', 'accuracy', 'samples', 'examplesPerSec', 'gradNoiseScale', 'statEfficiency']) expect(typeof p[k]).toBe('number');
      expect(p).toMatchObject({ workers: 1, globalBatch: 32, localBatch: 32, gnsMethod: 'pass', gnsBatches: 44, baseBatch: 1 });
      expect(p.gradNoiseScale).toBeGreaterThan(0);
      expect(p.statEfficiency).toBeCloseTo((p.gradNoiseScale + 1) / (p.gradNoiseScale + 32), 3);
    }
    expect(progress[2].loss).toBeLessThan(progress[0].loss);
    expect(progress[2].accuracy).toBeGreaterThan(progress[0].accuracy);
    expect(progress[2].accuracy).toBeGreaterThan(0.85);
    expect(progress[2].samples).toBe(3 * 1438);
    const done = lines.find((l) => l.type === 'done');
    expect(done).toMatchObject({ epochs: 3, samples: 3 * 1438 });
    expect(fs.readdirSync(ckpt).filter((f) => f.startsWith('ckpt-'))).toHaveLength(2); // the two newest kept
  });

  test('SIGTERM checkpoints and exits 0; a restart resumes at that epoch and offset', async () => {
    const { image, ckpt } = fresh();
    const env = { EPOCHS: '100000', MODEL: 'softmax', CHECKPOINT_EVERY: '1000' };
    const first = run(image, ckpt, env);
    await first.waitForLine((l) => l.includes('"type":"progress"') && l.includes('"epoch":3,'), 20_000);
    const t0 = Date.now();
    first.child.kill('SIGTERM');
    const exit = await first.exited;
    expect(exit.code).toBe(0);
    expect(Date.now() - t0).toBeLessThan(5000);
    const saved = first.json().find((l) => l.type === 'checkpoint' && l.reason === 'signal');
    expect(saved).toBeDefined();
    expect(fs.existsSync(saved.path)).toBe(true);
    const lastEpoch = Math.max(...first.json().filter((l) => l.type === 'progress').map((l) => l.epoch));
    expect(saved.epoch).toBe(lastEpoch); // 0-based epoch in progress = completed epochs

    const second = run(image, ckpt, { ...env, EPOCHS: String(saved.epoch + 2) });
    expect((await second.exited).code).toBe(0);
    const start = second.json().find((l) => l.type === 'start');
    expect(start.resumedFrom).toMatchObject({ file: saved.path, epoch: saved.epoch, offset: saved.offset, step: saved.step, workers: 1, globalBatch: 32 });
    const progress = second.json().filter((l) => l.type === 'progress');
    expect(progress.map((p) => p.epoch)).toEqual([saved.epoch + 1, saved.epoch + 2]);
    expect(progress[0].step).toBe(Math.ceil(1438 / 32) * (saved.epoch + 1));
    expect(progress[0].samples).toBe(1438 * (saved.epoch + 1));
  });

  test('a bad setting fails fast with a message naming it', async () => {
    const { image, ckpt } = fresh();
    const fn = run(image, ckpt, { BATCH_SIZE: 'lots' });
    expect((await fn.exited).code).toBe(1);
    expect(fn.stderr).toMatch(/BATCH_SIZE="lots"/);
  });

  test('a global batch smaller than the worker count is refused', async () => {
    const { image, ckpt } = fresh();
    const fn = run(image, ckpt, { WORKERS: '4', BATCH_SIZE: '2' });
    expect((await fn.exited).code).toBe(1);
    expect(fn.stderr).toMatch(/BATCH_SIZE=2 with WORKERS=4/);
  });
});
