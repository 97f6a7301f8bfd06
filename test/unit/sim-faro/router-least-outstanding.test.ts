import type { ClusterController } from '../../../autoscaler/multitenant/types';
import { faroSimConfig, runFaroSim, type FaroSimConfig } from '../../../autoscaler/sim/faro';

/**
 * The simulator's optional router (cfg.router): 'leastOutstanding' is the mlfaas gateway's rule
 * (gateway/proxy/balancer.ts with equal weights); the default stays the artifact's round robin.
 * Deterministic service times (one per replica below) and an instant proxy make each assignment visible.
 */
const idle: ClusterController = { name: 'idle', tickS: 1000, tick: () => null };

function cfg(over: Partial<FaroSimConfig> = {}): FaroSimConfig {
  return faroSimConfig(8, { service: { shape: 0, loc: 0.1, scale: 0 }, route: { shape: 0, loc: 0, scale: 0 }, ...over });
}

function run(arrivals: number[], replicas: number, over: Partial<FaroSimConfig> = {}, seed = 1) {
  return runFaroSim({ cfg: cfg(over), jobNames: ['a'], arrivals: [Float64Array.from(arrivals)], controller: idle, initialReplicas: [replicas], seed });
}

const latMs = (rec: ReturnType<typeof run>) => Array.from(rec.end, (e, i) => Math.round((e - rec.arrival[i]) * 1e3));

describe('Faro simulator router option', () => {
  test('leastOutstanding never queues behind a busy replica while another is idle', () => {
    // 3 replicas; 3 requests at t = 0 fill them (one each), the 4th at 0.15 finds all idle again
    const arr = [0, 0, 0, 0.15, 0.16, 0.17];
    const rec = run(arr, 3, { router: 'leastOutstanding' });
    // every request gets its own idle replica: each takes just its service time
    expect(latMs(rec)).toEqual([100, 100, 100, 100, 100, 100]);
  });

  test('with lognormal service times, leastOutstanding waits less than round robin on the same arrivals', () => {
    // 3 replicas at ρ ≈ 0.75 (a request every 60 ms, 154 ms mean service): round robin sends a request to a replica that still
    // holds one while another is idle; least-outstanding does not. Same seed, same arrivals; 1500 requests per run.
    const noisy = { service: { shape: 0.42247119243841247, loc: 0.07930158214998745, scale: 0.06858078649769431 } };
    const arr = Array.from({ length: 1500 }, (_, i) => i * 0.06 + 0.02 * Math.sin(i));
    const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
    for (const seed of [1, 2, 3]) {
      const rr = mean(latMs(run(arr, 3, noisy, seed)));
      const lo = mean(latMs(run(arr, 3, { ...noisy, router: 'leastOutstanding' }, seed)));
      expect(lo).toBeLessThan(rr);
    }
  });

  test('leastOutstanding respects the per-replica cap (maxConcurrent) and holds the rest at the job queue', () => {
    const rec = run(new Array(9).fill(0), 2, { router: 'leastOutstanding' });
    const lat = latMs(rec).sort((a, b) => a - b);
    // 2 replicas × 4 assigned at once; the 9th waits for the first to finish, then is the 5th on that replica
    expect(lat).toEqual([100, 100, 200, 200, 300, 300, 400, 400, 500]);
  });

  test("the default is the artifact's round robin: no router and router 'roundRobin' give the same run", () => {
    const arr = Array.from({ length: 400 }, (_, i) => i * 0.06);
    const noisy = { service: { shape: 0.42247119243841247, loc: 0.07930158214998745, scale: 0.06858078649769431 } };
    const a = run(arr, 3, noisy, 7);
    const b = run(arr, 3, { ...noisy, router: 'roundRobin' }, 7);
    expect(Array.from(b.end)).toEqual(Array.from(a.end));
    const c = run(arr, 3, { ...noisy, router: 'leastOutstanding' }, 7);
    expect(Array.from(c.end)).not.toEqual(Array.from(a.end));
  });
});
