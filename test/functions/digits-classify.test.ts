import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  FunctionProcess, freePort, layoutImage, post, removeImage, repoRoot, startFunction, waitFor200,
} from '../templates/image-layout';

const fnDir = path.join(repoRoot, 'functions/digits-classify');
const metrics = JSON.parse(fs.readFileSync(path.join(fnDir, 'metrics.json'), 'utf8'));
const split = JSON.parse(fs.readFileSync(path.join(fnDir, 'data/split.json'), 'utf8'));
const rows = fs.readFileSync(path.join(fnDir, 'data/digits.csv'), 'utf8').trim().split('\n').slice(1)
  .map((l) => l.split(',').map(Number));

describe('digits-classify data', () => {
  test('the csv is the 1797 x (64 pixels + label) digits set, pixels 0-16', () => {
    expect(rows).toHaveLength(1797);
    for (const r of rows) {
      expect(r).toHaveLength(65);
      expect(Math.min(...r.slice(0, 64))).toBeGreaterThanOrEqual(0);
      expect(Math.max(...r.slice(0, 64))).toBeLessThanOrEqual(16);
    }
    expect(new Set(rows.map((r) => r[64]))).toEqual(new Set([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]));
  });

  test('digits-train ships the same bytes', () => {
    const a = fs.readFileSync(path.join(fnDir, 'data/digits.csv'));
    const b = fs.readFileSync(path.join(repoRoot, 'functions/digits-train/data/digits.csv'));
    expect(a.equals(b)).toBe(true);
  });

  test('digit.json is the held-out row named in metrics.json', () => {
    const digit = JSON.parse(fs.readFileSync(path.join(repoRoot, 'functions', 'digits-classify', 'digit.json'), 'utf8'));
    const row = rows[metrics.digitJson.datasetRow];
    expect(digit.instances[0]).toEqual(row.slice(0, 64));
    expect(row[64]).toBe(metrics.digitJson.label);
    expect(split.testRows).toContain(metrics.digitJson.datasetRow);
  });
});

describe('digits-classify served by ml-inference', () => {
  let fn: FunctionProcess;
  let base: string;
  let dir: string;
  beforeAll(async () => {
    dir = layoutImage('ml-inference', 'functions/digits-classify', ['data']);
    const port = await freePort();
    fn = startFunction(dir, { PORT: String(port), MAX_BATCH_SIZE: '32' });
    base = `http://127.0.0.1:${port}`;
    await waitFor200(`${base}/_/ready`, 10_000);
  });
  afterAll(() => {
    fn.kill();
    removeImage(dir);
  });

  test('held-out accuracy through the runtime equals the one train.py measured', async () => {
    const test = split.testRows.map((i: number) => rows[i]);
    const r = await post(base, { instances: test.map((row: number[]) => row.slice(0, 64)) });
    expect(r.status).toBe(200);
    expect(r.body.predictions).toHaveLength(test.length);
    const correct = test.filter((row: number[], i: number) => r.body.predictions[i].label === String(row[64])).length;
    const accuracy = correct / test.length;
    expect(accuracy).toBeCloseTo(metrics.testAccuracy, 2);
    expect(accuracy).toBeGreaterThan(0.95);
    const stats = await (await fetch(`${base}/_/stats`)).json() as { batches: number; lastBatchSize: number };
    expect(stats.batches).toBeGreaterThanOrEqual(Math.ceil(test.length / 32));
  });
});
