/**
 * Calibration of the latency model on the simulator's own mechanics (not on any trace): one job,
 * constant Poisson rate, n replicas at quota q, fixed (no controller); p99 per minute, median over
 * 20 minutes. `tsx bench/multitenant/ours-calibrate.ts`.
 */
import { faroSimConfig } from '../../autoscaler/sim/faro/config';
import { runFaroSim } from '../../autoscaler/sim/faro/engine';
import { analyzeFaro } from '../../autoscaler/sim/faro/metrics';
import { poissonArrivals } from '../../autoscaler/sim/faro/trace';

const fixed = { name: 'fixed', tickS: 10, tick: () => null };
const rows: string[] = [];
for (const n of [1, 2, 3, 4, 6, 8, 12]) {
  for (const q of [0.5, 0.7, 0.85, 1]) {
    const line: string[] = [];
    for (const rho of [0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]) {
      const lam = (rho * n * q * 1000) / 154;
      const trace = { jobs: ['j'], counts: [Array.from({ length: 30 }, () => Math.round(lam * 60))] };
      const cfg = faroSimConfig(n, { acceptRateOnlyWithReplicaChange: false });
      const ctl = { ...fixed, tick: () => ({ jobs: [{ quota: q }], reason: 'fixed' }) };
      let first = true;
      const rec = runFaroSim({
        cfg, jobNames: ['j'], arrivals: poissonArrivals(trace, 7), initialReplicas: [n], seed: 7,
        controller: { ...ctl, tick: () => (first ? ((first = false), ctl.tick()) : null) },
      });
      const m = analyzeFaro(rec, 720, { slots: 30 });
      line.push(`${(1 - m.lostUtility).toFixed(3)}`);
    }
    rows.push(`${n} ${q} ${line.join(' ')}`);
  }
}
console.log('n q | utility at rho (of the 154 ms mean service) 0.3 0.4 0.5 0.6 0.7 0.8 0.9');
console.log(rows.join('\n'));
