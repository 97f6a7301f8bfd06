import { proxyLatencyMs, rrLatencyFactor } from '../../../autoscaler/multitenant/mlfaas/rr-model';
import { cheapestSizing, quotaFor, replicaLatencyMs, type LatencyModel } from '../../../autoscaler/multitenant/mlfaas/latency';
import { RR_NS, RR_RHOS } from '../../../autoscaler/multitenant/mlfaas/rr-table';

const rr: LatencyModel = { percentile: 0.99, rhoMax: 0.9, router: 'roundRobin', minuteQuantile: 0.5 };
const mdc: LatencyModel = { percentile: 0.99, rhoMax: 0.9 };

describe('round-robin latency model (table measured on the Faro simulator\'s router)', () => {
  it('never falls as the load rises, at every replica count of the table', () => {
    for (const n of RR_NS) {
      let prev = 0;
      for (let rho = 0.05; rho <= RR_RHOS[RR_RHOS.length - 1]; rho += 0.01) {
        const f = rrLatencyFactor(n, rho);
        expect(f).toBeGreaterThanOrEqual(prev - 1e-9);
        prev = f;
      }
    }
  });

  it('is above the service time alone, and a miss beyond the measured utilisation', () => {
    expect(rrLatencyFactor(1, 0.1)).toBeGreaterThan(1);
    expect(rrLatencyFactor(4, 0.99)).toBe(Infinity);
    expect(rrLatencyFactor(0, 0.5)).toBe(Infinity);
  });

  it('interpolates between replica counts and holds the last one beyond the table', () => {
    const a = rrLatencyFactor(6, 0.7);
    const b = rrLatencyFactor(8, 0.7);
    const mid = rrLatencyFactor(7, 0.7);
    expect(mid).toBeGreaterThanOrEqual(Math.min(a, b) - 1e-9);
    expect(mid).toBeLessThanOrEqual(Math.max(a, b) + 1e-9);
    expect(rrLatencyFactor(64, 0.7)).toBe(rrLatencyFactor(RR_NS[RR_NS.length - 1], 0.7));
  });

  it('a later quantile over minutes predicts no lower latency', () => {
    for (const n of [1, 4, 12]) {
      for (const rho of [0.3, 0.6, 0.8]) expect(rrLatencyFactor(n, rho, 0.9)).toBeGreaterThanOrEqual(rrLatencyFactor(n, rho, 0.5) - 1e-9);
    }
  });

  it('one replica: M/D/c (half the M/M/1 wait) is more pessimistic than the round robin at moderate load', () => {
    // 3.5 req/s on one whole replica of p = 154 ms (ρ ≈ 0.54)
    expect(replicaLatencyMs(rr, 154, 3.5, 1, 1)).toBeLessThan(replicaLatencyMs(mdc, 154, 3.5, 1, 1));
  });

  it('many replicas: the round robin pools less than one M/D/c queue', () => {
    // 12 replicas at ρ = 0.85: M/D/c's pooled wait is small; per-replica queues are not
    expect(replicaLatencyMs(rr, 154, (0.85 * 12 * 1000) / 154, 12, 1)).toBeGreaterThan(replicaLatencyMs(mdc, 154, (0.85 * 12 * 1000) / 154, 12, 1));
  });

  it('scales with the quota (a replica at q serves in p/q) and adds the proxy', () => {
    const base = replicaLatencyMs(rr, 154, 5, 4, 1);
    expect(replicaLatencyMs(rr, 154, 2.5, 4, 0.5)).toBeCloseTo(2 * base, 6);
    expect(replicaLatencyMs({ ...rr, routerMs: 9 }, 154, 5, 4, 1)).toBeCloseTo(base + proxyLatencyMs(9, 5), 6);
    expect(proxyLatencyMs(9, 200)).toBe(Infinity);
  });

  it('quotaFor and cheapestSizing work on it as on M/D/c', () => {
    const q = quotaFor(rr, 180, 10, 4, 540, 0.01)!;
    expect(q).toBeGreaterThan(0);
    expect(replicaLatencyMs(rr, 180, 10, 4, q)).toBeLessThanOrEqual(540);
    expect(replicaLatencyMs(rr, 180, 10, 4, q - 0.01)).toBeGreaterThan(540);
    const s = cheapestSizing(rr, 180, 10, 540, 0.01, 36)!;
    expect(s.cpu).toBeGreaterThan((10 * 180) / 1000);
  });
});
