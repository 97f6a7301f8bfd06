import { classify, compareShape, elasticity, gridCurve, normalise, parseGridLog } from '../../bench/lib/share-shape';

const curve = (pts: Array<[number, number]>) => new Map(pts);
// H100 section 3 (README): resnet50 batch 1 and batch 32, p50 ms
const h100b1 = curve([[1, 4.31], [0.5, 4.65], [0.25, 4.31], [0.1, 4.7]]);
const h100b32 = curve([[1, 4.48], [0.5, 6.26], [0.25, 10.97], [0.1, 23.88]]);

describe('share-shape', () => {
  test('normalises by the latency at share 1 and refuses a curve without it', () => {
    expect([...normalise(curve([[1, 2], [0.5, 3]]))]).toEqual([[1, 1], [0.5, 1.5]]);
    expect(() => normalise(curve([[0.5, 3]]))).toThrow(/share 1/);
  });

  test('the H100 grid classes: batch 1 flat, batch 32 about 1/share below 50 %', () => {
    expect(classify(normalise(h100b1))).toBe('flat');
    expect(classify(normalise(h100b32))).toBe('inverse');
    // latency exactly ∝ 1/share has elasticity 1
    expect(elasticity(normalise(curve([[1, 1], [0.5, 2], [0.25, 4], [0.1, 10]])))).toBeCloseTo(1, 9);
  });

  test('a curve of the same shape on a slower GPU agrees (absolute latency does not matter)', () => {
    const v100 = curve([...h100b32].map(([s, l]) => [s, 5 * l * (s === 0.1 ? 1.2 : 1)]));
    const c = compareShape(v100, h100b32);
    expect(c.agree).toBe(true);
    expect(c.verdict).toBe('agree');
    expect(c.points.find((p) => p.share === 0.1)!.factor).toBeCloseTo(1.2, 9);
  });

  test('a flat model of a batch that slows as 1/share is flagged, point by point and by class', () => {
    const flat = curve([[1, 20], [0.5, 20.4], [0.25, 20.1], [0.1, 21]]);
    const c = compareShape(flat, h100b32);
    expect(c.agree).toBe(false);
    expect(c.verdict).toBe('different class');
    expect(c.modelClass).toBe('flat');
    expect(c.refClass).toBe('inverse');
    expect(c.worst.share).toBe(0.1);
    expect(c.worst.factor).toBeLessThan(0.25);
    expect(c.points.filter((p) => !p.agree).map((p) => p.share)).toEqual([0.25, 0.1]);
  });

  test('same class but off by more than the tolerance at a point', () => {
    // inverse too, but twice as steep at 10 %
    const steep = curve([[1, 1], [0.5, 1.4], [0.25, 2.45], [0.1, 10.66]]);
    const c = compareShape(steep, h100b32);
    expect(c.verdict).toBe('same class');
    expect(c.points.find((p) => p.share === 0.1)!.agree).toBe(false);
  });

  test('the model must have every share the reference has', () => {
    expect(() => compareShape(curve([[1, 1], [0.5, 1]]), h100b1)).toThrow(/share 0.25/);
  });

  test('parses section B of the raw log', () => {
    const log = [
      '== B. latency grid under MPS: model x batch x SM percentage',
      '{"mode": "grid", "model": "resnet50", "pct": "100", "batch": 1, "n": 139, "p50_ms": 4.313, "p99_ms": 6.448, "ips": 230.9}',
      '{"mode": "limiter", "model": "resnet50", "pct": null, "batch": 8, "p50_ms": 4.1, "p99_ms": 8.7}',
      '{"done_s": 28.3}',
      '{"mode": "grid", "model": "resnet50", "pct": "10", "batch": 1, "n": 110, "p50_ms": 4.699, "p99_ms": 10.469, "ips": 182.7}',
    ].join('\n');
    const g = parseGridLog(log);
    expect(g).toHaveLength(2);
    expect([...gridCurve(g, 'resnet50', 1)]).toEqual([[1, 4.313], [0.1, 4.699]]);
    expect([...gridCurve(g, 'resnet50', 1, 'p99')]).toEqual([[1, 6.448], [0.1, 10.469]]);
  });
});
