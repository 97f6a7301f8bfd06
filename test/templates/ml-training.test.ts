import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { FunctionProcess, layoutImage, removeImage, repoRoot, startFunction } from './image-layout';

// The harness is plain CommonJS; its pure parts are tested in-process.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const nn = require(path.join(repoRoot, 'templates/ml-training/nn.js'));
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { gradientNoiseScale } = require(path.join(repoRoot, 'templates/ml-training/gns.js'));

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
    expect(start).toMatchObject({ model: 'mlp', parameters: 64 * 32 + 32 + 32 * 10 + 10, trainExamples: 1438, testExamples: 359, resumedFrom: null });
    const progress = lines.filter((l) => l.type === 'progress');
    expect(progress.map((p) => p.epoch)).toEqual([1, 2, 3]);
    for (const p of progress) {
      for (const k of ['loss', 'accuracy', 'samples', 'examplesPerSec', 'gradNoiseScale']) expect(typeof p[k]).toBe('number');
      expect(p.gradNoiseScale).toBeGreaterThan(0);
    }
    expect(progress[2].loss).toBeLessThan(progress[0].loss);
    expect(progress[2].accuracy).toBeGreaterThan(progress[0].accuracy);
    expect(progress[2].accuracy).toBeGreaterThan(0.85);
    expect(progress[2].samples).toBe(3 * 1438);
    const done = lines.find((l) => l.type === 'done');
    expect(done).toMatchObject({ epochs: 3, samples: 3 * 1438 });
    expect(fs.readdirSync(ckpt).filter((f) => f.startsWith('ckpt-'))).toHaveLength(2); // the two newest kept
  });

  test('SIGTERM checkpoints and exits 0; a restart resumes at that epoch and batch', async () => {
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
    expect(start.resumedFrom).toMatchObject({ file: saved.path, epoch: saved.epoch, batch: saved.batch, step: saved.step });
    const progress = second.json().filter((l) => l.type === 'progress');
    expect(progress.map((p) => p.epoch)).toEqual([saved.epoch + 1, saved.epoch + 2]);
    expect(progress[0].step).toBe(Math.ceil(1438 / 32) * (saved.epoch + 1));
  });

  test('a bad setting fails fast with a message naming it', async () => {
    const { image, ckpt } = fresh();
    const fn = run(image, ckpt, { BATCH_SIZE: 'lots' });
    expect((await fn.exited).code).toBe(1);
    expect(fn.stderr).toMatch(/BATCH_SIZE="lots"/);
  });

  test('WORKERS > 1 is refused until data-parallel training lands', async () => {
    const { image, ckpt } = fresh();
    const fn = run(image, ckpt, { WORKERS: '2' });
    expect((await fn.exited).code).toBe(1);
    expect(fn.stderr).toMatch(/WORKERS=2/);
  });
});
