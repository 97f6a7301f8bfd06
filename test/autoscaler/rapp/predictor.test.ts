import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { calibrate } from '../../../autoscaler/rapp/predicted-profile';

/** test/fixtures/rapp/linear.onnx (bench/rapp/make_test_model.py): latency = 20 ms · batch^0.3 / quota from [ln batch, ln quota]. */
const ROOT = join(__dirname, '..', '..', '..');
const MODEL = join(ROOT, 'test', 'fixtures', 'rapp', 'linear.onnx');
const truth = (b: number, q: number) => (20 * Math.pow(b, 0.3)) / q;

interface ChildOut {
  rows: number[];
  empty: number;
  ragged: string;
  pts: Array<{ batch: number; smShare: number; quota: number; latencyMs: number }>;
  capLat: number;
  capRps: number;
  missing: string;
}

describe('learned latency model in onnxruntime-node (run in a child process, as the autoscaler runs it)', () => {
  let out: ChildOut;
  beforeAll(() => {
    const text = execFileSync(process.execPath, ['--import', 'tsx', join(__dirname, 'predict-child.ts'), MODEL],
      { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
    out = JSON.parse(text.trim().split('\n').pop()!);
  });

  test('predicts ln latency rows in one run, back in ms; bad rows and files are clear errors', () => {
    expect(out.rows).toHaveLength(3);
    expect(out.rows[0]).toBeCloseTo(20, 3);
    expect(out.rows[1] / truth(4, 0.5)).toBeCloseTo(1, 5);
    expect(out.rows[2] / truth(8, 0.1)).toBeCloseTo(1, 5);
    expect(out.empty).toBe(0);
    expect(out.ragged).toMatch(/feature row 1 has 1 values, row 0 has 2/);
    expect(out.missing).not.toBe('');
  });

  test("a function's whole grid predicted at once is a profile the capability interface answers from", () => {
    expect(out.pts).toHaveLength(3 * 2 * 3);
    for (const p of out.pts) expect(p.latencyMs / truth(p.batch, p.quota)).toBeCloseTo(1, 5);
    expect(out.capLat / truth(2, 0.5)).toBeCloseTo(1, 5);
    expect(out.capRps).toBeCloseTo((4 * 1000) / truth(4, 1), 2);
  });
});

describe('calibration to measured points', () => {
  const pred = [1, 2, 4].map((batch) => ({ batch, smShare: 1, quota: 1, latencyMs: 10 * batch }));
  test('scales every prediction by the geometric mean of measured ÷ predicted and keeps the measurements', () => {
    const c = calibrate(pred, [
      { batch: 1, smShare: 1, quota: 1, latencyMs: 20 },
      { batch: 2, smShare: 1, quota: 1, latencyMs: 80 },
    ]);
    expect(c.used).toBe(2);
    expect(c.factor).toBeCloseTo(Math.sqrt(2 * 4), 9);
    expect(c.points.map((p) => p.latencyMs)).toEqual([20, 80, expect.closeTo(40 * Math.sqrt(8), 9)]);
  });

  test('nothing measured on the grid: the prediction as it was', () => {
    const c = calibrate(pred, [{ batch: 16, smShare: 1, quota: 1, latencyMs: 5 }]);
    expect(c).toEqual({ points: pred, factor: 1, used: 0 });
  });
});
