import { mdcLatencyMs, upperBoundReplicas, mmcTerms } from '../../../autoscaler/reproductions/faro/latency';
import { relaxedUtility, stepUtility, meanUtility, linearPenalty, stepPenalty, AWS_PENALTY_STEPS } from '../../../autoscaler/reproductions/faro/utility';

describe('Faro utility (Sec. 3.1)', () => {
  test('U(1440 ms) = 0.5 at s = 720 ms; capped at 1; U(∞) = 0', () => {
    expect(relaxedUtility(1440, 720)).toBeCloseTo(0.5, 12);
    expect(relaxedUtility(300, 720)).toBe(1);
    expect(relaxedUtility(Infinity, 720)).toBe(0);
    expect(relaxedUtility(1440, 720, 2)).toBeCloseTo(0.25, 12);
  });
  test('step utility', () => {
    expect(stepUtility(720, 720)).toBe(1);
    expect(stepUtility(720.001, 720)).toBe(0);
    expect(meanUtility([720, 1440, 2880], 720)).toBeCloseTo((1 + 0.5 + 0.25) / 3, 12);
    expect(meanUtility([720, 1440], 720, 'step')).toBe(0.5);
  });
  test.each([
    { v: 0, want: 0 }, { v: 0.001, want: 0 }, { v: 0.03, want: 0.25 }, { v: 0.08, want: 0.5 }, { v: 1, want: 1 },
    { v: 0.0155, want: 0.125 }, { v: 0.54, want: 0.75 }, { v: 2, want: 1 }, { v: -1, want: 0 },
  ])('linear strict penalty φ($v) = $want', ({ v, want }) => {
    expect(linearPenalty(v)).toBeCloseTo(want, 12);
  });
  test('step penalties', () => {
    expect(stepPenalty(0.02)).toBe(0.25);
    expect(stepPenalty(0.5)).toBe(1);
    expect(stepPenalty(0.01, AWS_PENALTY_STEPS)).toBe(0);
    expect(stepPenalty(0.07, AWS_PENALTY_STEPS)).toBe(0.5);
  });
});

describe('Faro latency model (Sec. 3.3), p = 150 ms, λ = 40 req/s, s = 600 ms', () => {
  test('upper bound ⌈λp/s⌉ = 10 replicas', () => {
    expect(upperBoundReplicas(40, 150, 600)).toBe(10);
  });
  test.each([
    { n: 7, want: 804.2 }, { n: 8, want: 456.8 },
  ])('M/D/c p99.99, N = $n → $want ms', ({ n, want }) => {
    expect(mdcLatencyMs(40, n, 150, 99.99)).toBeCloseTo(want, 1);
  });
  test('8 replicas is the fewest that meet 600 ms at p99.99 (the paper\'s example)', () => {
    const fewest = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].find((n) => mdcLatencyMs(40, n, 150, 99.99) <= 600);
    expect(fewest).toBe(8);
  });
  test.each([
    { n: 4, want: 2895.5 }, { n: 5, want: 1885.2 }, { n: 6, want: 1331.8 }, { n: 7, want: 458.8 }, { n: 8, want: 284.1 },
  ])('M/D/c p99, N = $n → $want ms', ({ n, want }) => {
    expect(mdcLatencyMs(40, n, 150, 99)).toBeCloseTo(want, 1);
  });
  test('relaxation above ρ_max: L(λ) = (λ/λ′)·L(λ′)', () => {
    const lPrime = (0.95 * 6) / 0.15;
    expect(mdcLatencyMs(40, 6, 150, 99)).toBeCloseTo((40 / lPrime) * mdcLatencyMs(lPrime, 6, 150, 99), 9);
  });
  test('fractional N, zero load, N ≤ 0', () => {
    const l = mdcLatencyMs(40, 7.5, 150, 99);
    expect(l).toBeLessThan(mdcLatencyMs(40, 7, 150, 99));
    expect(l).toBeGreaterThan(mdcLatencyMs(40, 8, 150, 99));
    expect(mdcLatencyMs(0, 3, 180, 99)).toBeCloseTo(180, 9);
    expect(mdcLatencyMs(10, 0, 180, 99)).toBe(Infinity);
    expect(mdcLatencyMs(10, -1, 180, 99)).toBe(Infinity);
  });
  test('Erlang C for one server is ρ', () => {
    expect(mmcTerms(5, 10, 1).queueProb).toBeCloseTo(0.5, 12);
  });
});
