import { erlangC, mdcLatencyMs, mdcReplicas, relaxedMdcLatencyMs, sharedQueueLatencyMs, sharedQueueRate, sloRate, sloRateBisect,
  upperBoundReplicas } from '../../autoscaler/inference/queueing';

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
      if (a > 0 && a < (1000 * batch) / batchMs * (1 - 1e-9)) {
        expect(mdcLatencyMs(k, batchMs / batch, a, 1) - batchMs / batch + batchMs).toBeLessThanOrEqual(sloMs * (1 + 1e-9));
      }
    }
  });
});

describe('shared-queue model (one FIFO queue, c replicas, dynamic batching)', () => {
  // Hand-checked: p = 10 ms (μ = 100/s per server), k = 0.99 (tail 0.01).
  // n = 1, λ = 50: C = ρ = 0.5, W99 = ln(0.5/0.01)/(100 − 50) s = 78.24 ms, half = 39.12, + 10 = 49.12 ms.
  // n = 2, λ = 100: a = 1, Erlang B(2, 1) = 0.2, C = 0.2/(1 − 0.5·0.8) = 1/3,
  //   W99 = ln(33.33)/(200 − 100) s = 35.07 ms, half = 17.53, + 10 = 27.53 ms.
  test.each([
    [1, 100, 10, 50, 49.12],
    [2, 200, 10, 100, 27.53],
    [2, 200, 10, 1, 10], // C = 0.0025·… < tail: no wait, the batch latency alone
  ])('n=%d muTot=%d lMax=%d λ=%d → %d ms', (n, mu, l, lam, want) => {
    expect(sharedQueueLatencyMs(0.99, n, mu, l, lam)).toBeCloseTo(want, 1);
  });

  test('unbatched and identical servers: equals Faro\'s M/D/c estimate (mdcLatencyMs)', () => {
    for (const [k, p, lam, n] of [[0.99, 150, 40, 8], [0.95, 20, 120, 3], [0.9999, 50, 10, 1]])
      expect(sharedQueueLatencyMs(k, n, (n * 1000) / p, p, lam)).toBeCloseTo(mdcLatencyMs(k, p, lam, n), 9);
  });

  test('one server with batching reduces to the per-replica M/D/1 model (sloRate inverts it)', () => {
    // batch 4 in 40 ms: full-batch rate 100/s; SLO 100 ms at p99
    const r = sloRate(0.99, 40, 4, 100);
    expect(sharedQueueRate(0.99, 1, 100, 40, 100)).toBeCloseTo(r, 3);
  });

  test('the rate is the inverse of the latency, and one shared queue beats n separate ones', () => {
    const lam = sharedQueueRate(0.99, 4, 400, 10, 40);
    expect(sharedQueueLatencyMs(0.99, 4, 400, 10, lam)).toBeCloseTo(40, 3);
    expect(lam).toBeGreaterThan(4 * sharedQueueRate(0.99, 1, 100, 10, 40));
    expect(sharedQueueRate(0.99, 1, 100, 50, 40)).toBe(0); // one batch already misses the SLO
  });

  test('light load on a batching replica: waiting is as likely as unbatched (mu1Tot), the drain batched', () => {
    // batch 4 at 40 ms (100/s), batch 1 at 20 ms (50/s); λ = 25: unbatched busy 0.5, batched 0.25
    const batched = sharedQueueLatencyMs(0.99, 1, 100, 40, 25);
    const dyn = sharedQueueLatencyMs(0.99, 1, 100, 40, 25, 50);
    // C = 0.5: W99 = ln(50)/(100 − 25) s = 52.16 ms, half 26.08, + 40 = 66.08 ms (C = 0.25: ln(25)/75 s = 42.92, half 21.46, + 40 = 61.46 ms)
    expect(dyn).toBeCloseTo(66.08, 1);
    expect(batched).toBeCloseTo(61.46, 1);
    // unbatched load ≥ 1 server: every arrival waits
    expect(sharedQueueLatencyMs(0.99, 1, 100, 40, 60, 50)).toBeCloseTo(40 + (Math.log(100) / 40) * 500, 6);
  });
});
