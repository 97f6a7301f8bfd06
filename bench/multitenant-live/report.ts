/** The markdown of bench/results/multitenant-live.md from the runs (issue 24). Pure. */
import { table } from '../lib/results';
import { meanSpread, RunStats } from './utility';

export interface RunRow {
  seed: number; lending: boolean; stats: RunStats; requests: number; load: [number, number]; busyCores: number;
  /** Cores the replicas used over the run (cpuacct). */
  replicaCores: number;
}
export interface Setup { cmd: string; names: string[]; minutes: number; unitS: number; rate: number; sloMs: number; images: number }

const ms = (x: number) => (x > 1e300 ? '∞' : x.toFixed(0));
const pm = (xs: number[], d: number) => {
  const m = meanSpread(xs);
  return `${m.mean.toFixed(d)} ± ${m.spread.toFixed(d)}`;
};

export function writeReport(rows: RunRow[], s: Setup): { text: string; lent: number; held: number } {
  const of = (lending: boolean) => rows.filter((r) => r.lending === lending);
  const cfgTable = (lending: boolean) => {
    const rs = of(lending);
    const body = s.names.map((n, i) => [n, pm(rs.map((r) => 100 * r.stats.perFn[i].withinSlo), 2),
      pm(rs.map((r) => 1 - r.stats.perFn[i].utility), 3),
      rs.map((r) => ms(r.stats.perFn[i].p99Ms)).join(' / '),
      rs.map((r) => `${r.stats.perFn[i].dropped}/${r.stats.perFn[i].failed}/${r.stats.perFn[i].n}`).join(', ')]);
    const within = (r: RunRow) => (100 * r.stats.perFn.reduce((a, f) => a + f.withinSlo * f.n, 0)) / r.stats.perFn.reduce((a, f) => a + f.n, 0);
    body.push(['**all**', pm(rs.map(within), 2),
      `**${pm(rs.map((r) => r.stats.lostUtility), 3)}**`, '', '']);
    const head = ['function', 'within SLO % (mean ± half range)', 'lost utility', 'p99 over the run, ms (per seed)', '429 / failed / requests (per seed)'];
    return table(head, body);
  };
  const seeds = [...new Set(rows.map((r) => r.seed))];
  const paired = seeds.map((seed) => {
    const on = rows.find((r) => r.seed === seed && r.lending)!;
    const off = rows.find((r) => r.seed === seed && !r.lending)!;
    const order = rows.indexOf(on) < rows.indexOf(off) ? 'lent first' : 'held first';
    return [seed, order, on.stats.lostUtility.toFixed(3), off.stats.lostUtility.toFixed(3), (on.stats.lostUtility - off.stats.lostUtility).toFixed(3),
      `${on.load[0].toFixed(2)} / ${off.load[0].toFixed(2)}`, `${on.replicaCores.toFixed(2)} / ${off.replicaCores.toFixed(2)}`,
      `${on.busyCores.toFixed(2)} / ${off.busyCores.toFixed(2)}`];
  });
  const lent = meanSpread(of(true).map((r) => r.stats.lostUtility)).mean;
  const held = meanSpread(of(false).map((r) => r.stats.lostUtility)).mean;
  const windows = (r: RunRow) => s.names.map((n, i) => `${n}: ` + r.stats.windows.filter((w) => w.fn === i)
    .map((w) => `${w.n}:${ms(w.p99Ms)}${w.dropped ? `(${w.dropped}×429)` : ''}`).join(' ')).join('\n');
  const text = `# Live load test of fixed-cluster lending (issue 24)

Written by \`${s.cmd}\` on ${new Date().toISOString()}. Every number below is measured by that command.

## Setup
- The real platform (\`mlfaas up\`: gateway, agent, embedded Redis, replicas as processes in cgroups v1), fixed-cluster mode:
  \`MLFAAS_CLUSTER_CAPACITY=2\`, \`MLFAAS_CLUSTER_CONTROLLER=mlfaas\`, \`MLFAAS_CLUSTER_LENDING=1\` (lent: request = quota via cpu.shares, limit one core)
  or \`=0\` (held: request = limit = quota, CFS). A fresh platform (data dir, Redis) for every run; the order alternates between seeds.
- Functions: ${s.names.join(', ')}: \`functions/image-classify\` (MobileNetV2, ONNX) deployed three times, 1–2 replicas each,
  SLO \`mlfaas.slo.latency_ms: ${s.sloMs}\` at p99, max batch 8; each request \`{"random": ${s.images}}\` (${s.images} synthesised images).
- Load: open loop, Faro's generator (bench/multitenant-live/arrivals.ts): per "minute" of ${s.unitS} s a count n_m, requests from m·${s.unitS} s with
  exponential gaps of mean ${s.unitS}/n_m s (a minute may spill into the next). n_m = ${s.rate} req/s × ${s.unitS} s × (1 + 0.7 sin(2πm/6 + φ_f)) × U[0.7, 1.3],
  φ_f = 0, 2π/3, 4π/3 (the sum stays near ${(3 * s.rate).toFixed(0)} req/s while each function swings 0.3×–1.7×); ${s.minutes} minutes, seeded:
  the same arrivals for lent and held. Latency at the client from the scheduled arrival (a late send counts); timeout 15 s (a failure).
- Figures as Faro's analyzeFaro: per function per minute the p99 (dropped or failed = infinitely late) gives min(SLO/p99, 1);
  lost utility = Σ_functions (1 − its mean over minutes); 0 is perfect, 3 is the worst here.
- The machine: 2 cores shared with another engineer's simulator runs; the 1-min load average at each run's start and the machine's busy
  cores over the run (all processes, /proc/stat) are in the paired table.

## Lent (\`MLFAAS_CLUSTER_LENDING=1\`), ${of(true).length} seeds

${cfgTable(true)}

## Held (\`MLFAAS_CLUSTER_LENDING=0\`), ${of(false).length} seeds

${cfgTable(false)}

## Paired by seed (same arrivals)

${table(['seed', 'order', 'lost utility lent', 'held', 'lent − held', 'load avg at start (lent / held)',
  'replicas\' cores (lent / held)', 'machine busy cores'], paired)}

Mean lost utility: lent ${lent.toFixed(3)}, held ${held.toFixed(3)}.

## Per minute (requests:p99 ms, drops), every run

${rows.map((r) => `seed ${r.seed}, ${r.lending ? 'lent' : 'held'}:\n\n\`\`\`\n${windows(r)}\n\`\`\``).join('\n\n')}
`;
  return { text, lent, held };
}
