/** Debug: one run with the decisions' reasons logged every `--every` ticks: `tsx bench/multitenant/ours-debug.ts --size 36 --seed 42 --day 1`. */
import { mlfaasClusterController } from '../../autoscaler/multitenant/mlfaas';
import { runOne } from './ours-lib';
import { arg } from './cli-args';

const size = Number(arg('size', '36'));
const every = Number(arg('every', '30'));
const params = JSON.parse(arg('params', '{}'));
let n = 0;
const hist = new Map<string, string[]>();
let overload = 0;
const m = runOne({
  size,
  seed: Number(arg('seed', '42')),
  day: arg('day', '1') === 'eval' ? 'eval' : Number(arg('day', '1')),
  make: (R) => {
    const c = mlfaasClusterController({ capacity: R, ...params });
    return {
      ...c,
      tick: (v) => {
        const d = c.tick(v);
        n++;
        if (d?.reason.startsWith('overload')) overload++;
        v.jobs.forEach((j, i) => {
          const k = `${i}:${Math.floor((v.nowS - 1) / 60)}`;
          const a = d?.jobs[i];
          const s = `${j.readyReplicas}/${j.replicas}x${j.quota.toFixed(2)}q${j.queueLength}→${a?.replicas ?? '='}x${a?.quota?.toFixed(2) ?? '='}`;
          hist.set(k, [...(hist.get(k) ?? []), s]);
        });
        if (n % every === 0) {
          const st = v.jobs.map((j) => `${j.readyReplicas}/${j.replicas}x${j.quota.toFixed(2)} q${j.queueLength} d${j.droppedLastTick}`).join(' | ');
          console.log(`t=${v.nowS} ${st}\n   ${d?.reason ?? '-'}`);
        }
        return d;
      },
    };
  },
});
console.log(JSON.stringify({ lost: m.lostUtility, viol: m.sloViolationRate, drop: m.dropRate, overloadTicks: overload, ticks: n }));

// Job-minutes that lost utility: p99 (ms) and drops.
const rec = m.record;
const bins = new Map<string, { lat: number[]; drops: number }>();
for (let i = 0; i < rec.job.length; i++) {
  const k = `${rec.job[i]}:${Math.floor(rec.arrival[i] / 60)}`;
  let b = bins.get(k);
  if (!b) bins.set(k, (b = { lat: [], drops: 0 }));
  if (rec.dropped[i] === 1) b.drops++;
  else b.lat.push((rec.end[i] - rec.arrival[i]) * 1000);
}
const losses: string[] = [];
let byDrop = 0;
let byLate = 0;
for (const [k, b] of bins) {
  const n = b.lat.length + b.drops;
  const sorted = b.lat.sort((x, y) => x - y);
  const p99 = b.drops > 0.01 * n ? Infinity : sorted[Math.min(sorted.length - 1, Math.floor(0.99 * (n - 1)))];
  const u = Math.min(1, 720 / p99);
  if (u < 1) {
    if (p99 === Infinity) byDrop += 1;
    else byLate += 1 - u;
    losses.push(`${k} n=${n} drops=${b.drops} p99=${Math.round(p99)} u=${u.toFixed(2)}  ${(hist.get(k) ?? []).join(' ')}`);
  }
}
console.log(`lost job-minutes: by drops ${byDrop}, by late p99 ${byLate.toFixed(1)} (of ${bins.size})`);
if (arg('losses', '0') === '1') console.log(losses.join('\n'));
