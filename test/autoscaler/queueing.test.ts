import { erlangC, mdcLatencyMs, mdcReplicas, relaxedMdcLatencyMs, sloRate, sloRateBisect, upperBoundReplicas } from '../../autoscaler/inference/queueing';

describe('Faro latency estimators (EuroSys\'25 Sec. 3.3)', () => {
  test('worked example: p = 150 ms, λ = 40 req/s, SLO 600 ms → upper bound 10 replicas, M/D/c p99.99 8', () => {
    expect(upperBoundReplicas(150, 40, 600)).toBe(10);
    expect(mdcReplicas(0.9999, 150, 40, 600)).toBe(8);
  });
  test.each([
    { name: 'unstable queue is infinite', k: 0.99, p: 100, l: 20, n: 2, want: Infinity },
    { name: 'idle queue is the service time', k: 0.99, p: 100, l: 0.0001, n: 4, want: 100 },
  ])('$name', ({ k, p, l, n, want }) => {
    expect(mdcLatencyMs(k, p, l, n)).toBeCloseTo(want, 3);
  });
  test('Erlang C of one server is ρ', () => expect(erlangC(1, 0.3)).toBeCloseTo(0.3, 12));
  test('relaxed estimate has no plateau past ρ_max', () => {
    const a = relaxedMdcLatencyMs(0.99, 100, 30, 4);
    const b = relaxedMdcLatencyMs(0.99, 100, 60, 4);
    expect(Number.isFinite(b)).toBe(true);
    expect(b).toBeGreaterThan(a);
  });
  test('sloRate: 0 when one batch misses the SLO, grows with the SLO', () => {
    expect(sloRate(0.99, 50, 1, 40)).toBe(0);
    expect(sloRate(0.99, 20, 1, 60)).toBeGreaterThan(sloRate(0.99, 20, 1, 30));
    expect(sloRate(0.99, 20, 1, 1e9)).toBeLessThanOrEqual(50);
  });
});

describe('sloRate closed form (Newton on ρ) agrees with bisection on the rate', () => {
  test.each([0.5, 0.9, 0.95, 0.99, 0.9999])('percentile %p', (k) => {
    for (const [batchMs, batch, sloMs] of [[20, 1, 30], [20, 1, 200], [5, 4, 6], [40, 2, 41], [10, 1, 10], [12, 1, 1e6], [33.3, 1, 47.1]]) {
      const a = sloRate(k, batchMs, batch, sloMs);
      const b = sloRateBisect(k, batchMs, batch, sloMs);
      expect(Math.abs(a - b)).toBeLessThanOrEqual(1e-9 * Math.max(1, b));
      if (a > 0 && a < (1000 * batch) / batchMs * (1 - 1e-9)) expect(mdcLatencyMs(k, batchMs / batch, a, 1) - batchMs / batch + batchMs).toBeLessThanOrEqual(sloMs * (1 + 1e-9));
    }
  });
});
