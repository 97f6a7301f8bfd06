/**
 * Where ours loses utility within a minute: each losing job-minute's loss (1 − min(SLO / p99, 1)) / 361
 * shared out over the second of the minute its late or dropped requests arrived in (0, 1, 2, 3, 4, 5+),
 * and split into minutes lost to drops (p99 infinite) and to lateness. Tuning days only:
 *   npx tsx bench/multitenant/ours-loss-seconds.ts --size 32 --days 1,4,8 --seeds 1,2,3 [--cpu shares --node-units 4] [--router roundRobin]
 */
import { arg, nums, simArgs, tuningDays } from './cli-args';
import { runOne } from './ours-lib';

const days = tuningDays();
const size = Number(arg('size', '32'));
const { router, cpu, nodeUnits } = simArgs('leastOutstanding');
const slo = 720;
let runs = 0;
let total = 0;
const cause = { drop: 0, late: 0 };
const bySecond = new Array<number>(6).fill(0);
for (const day of days) {
  for (const seed of nums(arg('seeds', '1'))) {
    const m = runOne({ size, seed, day, router, cpu, nodeUnits });
    runs++;
    total += m.lostUtility;
    const rec = m.record;
    const lat = new Map<string, number[]>();
    const lateAt = new Map<string, number[]>();
    for (let i = 0; i < rec.job.length; i++) {
      const k = `${rec.job[i]}:${Math.floor(rec.arrival[i] / 60)}`;
      if (!lat.has(k)) {
        lat.set(k, []);
        lateAt.set(k, new Array<number>(6).fill(0));
      }
      const l = rec.dropped[i] === 1 ? Infinity : (rec.end[i] - rec.arrival[i]) * 1e3;
      lat.get(k)!.push(l);
      if (l > slo) lateAt.get(k)![Math.min(5, Math.floor(rec.arrival[i] % 60))]++;
    }
    for (const [k, l] of lat) {
      l.sort((a, b) => a - b);
      const pos = 0.99 * (l.length - 1);
      const lo = Math.floor(pos);
      const hi = Math.ceil(pos);
      const p99 = l[hi] === Infinity ? Infinity : l[lo] + (l[hi] - l[lo]) * (pos - lo);
      const loss = (1 - Math.min(slo / p99, 1)) / 361;
      if (loss <= 0) continue;
      if (p99 === Infinity) cause.drop += loss;
      else cause.late += loss;
      const at = lateAt.get(k)!;
      const n = at.reduce((a, b) => a + b, 0);
      at.forEach((c, s) => (bySecond[s] += n > 0 ? (loss * c) / n : 0));
    }
  }
}
const f = (x: number): string => (x / runs).toFixed(4);
console.log(`size ${size}, ${runs} runs (${router}, cpu ${cpu}${nodeUnits ? `, nodes of ${nodeUnits}` : ''}): lost utility ${f(total)}; ` +
  `minutes lost to drops ${f(cause.drop)}, to lateness ${f(cause.late)}`);
console.log(`by the second of the minute the late requests arrived in (0, 1, 2, 3, 4, 5+): ${bySecond.map(f).join(' ')}`);
