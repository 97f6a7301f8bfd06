/**
 * A live load test of fixed-cluster lending (issue 24): the real platform (`mlfaas up`: gateway,
 * agent, Redis, replicas in cgroups) on this machine's 2 cores in fixed-cluster mode
 * (MLFAAS_CLUSTER_CAPACITY=2, MLFAAS_CLUSTER_CONTROLLER=mlfaas), three copies of image-classify,
 * Faro-style open-loop load (arrivals.ts) with different phases per function, the SAME arrivals run
 * with lending on (MLFAAS_CLUSTER_LENDING=1) and off (=0), a fresh platform each run, the order
 * alternated between seeds. Client-side figures (utility.ts): per function per window p99, within
 * SLO, drops, Faro's lost utility. Writes bench/results/multitenant-live.md; the last line is
 * `multitenant-live: lost_utility_lent=<x> lost_utility_held=<y> seeds=<n>`.
 *
 *   npm run bench:multitenant-live -- [--seeds 11,12,13] [--minutes 8] [--unit 12] [--rate 6] [--slo 300] [--images 2]
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { startPlatform } from './live/platform';
import { RESULTS_DIR } from './lib/results';
import { arrivalTimes, minuteCounts, rng, schedule } from './multitenant-live/arrivals';
import { drive } from './multitenant-live/client';
import { NAMES, writeStack } from './multitenant-live/stack';
import { analyze, RunStats } from './multitenant-live/utility';
import { writeReport, RunRow } from './multitenant-live/report';

const arg = (k: string, d: string) => {
  const i = process.argv.indexOf(`--${k}`);
  return i >= 0 ? process.argv[i + 1] : d;
};
const SEEDS = arg('seeds', '11,12,13').split(',').map(Number);
const MINUTES = Number(arg('minutes', '8'));
const UNIT_S = Number(arg('unit', '12'));
/** Mean rate per function, req/s. */
const RATE = Number(arg('rate', '6'));
const SLO_MS = Number(arg('slo', '300'));
/** Images per request ({"random": n}). */
const IMAGES = Number(arg('images', '2'));
const TIMEOUT_MS = 15_000;
const log = (l: string) => console.log(l);

/** Busy cores of the whole machine between two /proc/stat readings. */
function cpuTicks(): { busy: number; all: number } {
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  const idle = f[3] + f[4];
  const all = f.reduce((a, b) => a + b, 0);
  return { busy: all - idle, all };
}

/** CPU time of every replica (the mlfaas cgroup's cpuacct, children included, removed ones kept), s; NaN without it. */
function replicaCpuS(): number {
  try {
    return Number(readFileSync('/sys/fs/cgroup/cpuacct/mlfaas/cpuacct.usage', 'utf8')) / 1e9;
  } catch {
    return NaN;
  }
}

/** Bounded warm-up: each function answers 200 a few times (the platform is up and its replicas serve). */
async function warm(url: string, body: string): Promise<void> {
  for (const name of NAMES) {
    let ok = 0;
    const end = Date.now() + 120_000;
    while (ok < 5 && Date.now() < end) {
      const r = await request(`${url}/function/${name}`, { method: 'POST', body, headers: { 'content-type': 'application/json' } }).catch(() => undefined);
      await r?.body.dump();
      if (r?.statusCode === 200) ok++;
      else await new Promise((x) => setTimeout(x, 500));
    }
    if (ok < 5) throw new Error(`${name} did not answer within 120 s`);
  }
}

async function runOnce(seed: number, lending: boolean): Promise<RunRow> {
  const rand = rng(seed);
  const perFn = NAMES.map((_, fn) => arrivalTimes(
    minuteCounts({ minutes: MINUTES, unitS: UNIT_S, rate: RATE, amp: 0.7, periodMin: 6, phase: (2 * Math.PI * fn) / NAMES.length, noise: 0.3 }, rand),
    UNIT_S, rand));
  const plan = schedule(perFn);
  const dir = mkdtempSync(join(tmpdir(), 'mlfaas-mtlive-'));
  const body = JSON.stringify({ random: IMAGES });
  const p = await startPlatform(dir, 'hybrid', { MLFAAS_CLUSTER_CAPACITY: '2', MLFAAS_CLUSTER_CONTROLLER: 'mlfaas',
    MLFAAS_CLUSTER_LENDING: lending ? '1' : '0' }, log, writeStack(dir, SLO_MS));
  try {
    await warm(p.url, body);
    await new Promise((x) => setTimeout(x, 5000));
    const load0 = loadavg()[0];
    const c0 = cpuTicks();
    const r0 = replicaCpuS();
    const w0 = performance.now();
    const outcomes = await drive(p.url, NAMES.map((n) => `/function/${n}`), body, plan, TIMEOUT_MS);
    const c1 = cpuTicks();
    const replicaCores = (replicaCpuS() - r0) / ((performance.now() - w0) / 1000);
    const stats: RunStats = analyze(outcomes, NAMES.map(() => SLO_MS), UNIT_S);
    const busyCores = ((c1.busy - c0.busy) / (c1.all - c0.all)) * 2;
    const row: RunRow = { seed, lending, stats, requests: plan.length, load: [load0, loadavg()[0]], busyCores, replicaCores };
    log(`seed ${seed} lending ${lending ? 'on ' : 'off'}: lost utility ${stats.lostUtility.toFixed(3)}, ` +
      stats.perFn.map((f, i) => `${NAMES[i]} p99 ${f.p99Ms > 1e300 ? '∞' : f.p99Ms.toFixed(0)} ms within ${(100 * f.withinSlo).toFixed(1)}% ` +
        `drops ${f.dropped} failed ${f.failed}/${f.n}`).join('; ') +
      `; replicas used ${replicaCores.toFixed(2)} cores, machine busy ${busyCores.toFixed(2)}, load ${load0.toFixed(2)}`);
    return row;
  } finally {
    await p.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const rows: RunRow[] = [];
  for (const [i, seed] of SEEDS.entries()) {
    for (const lending of i % 2 === 0 ? [true, false] : [false, true]) rows.push(await runOnce(seed, lending));
  }
  const cmd = `npm run bench:multitenant-live -- ${process.argv.slice(2).join(' ')}`.trim();
  const md = writeReport(rows, { cmd, names: NAMES, minutes: MINUTES, unitS: UNIT_S, rate: RATE, sloMs: SLO_MS, images: IMAGES });
  writeFileSync(join(RESULTS_DIR, 'multitenant-live.md'), md.text);
  console.log(`multitenant-live: lost_utility_lent=${md.lent.toFixed(3)} lost_utility_held=${md.held.toFixed(3)} seeds=${SEEDS.length}`);
}

main().then(() => process.exit(0), (e) => {
  console.error(e);
  process.exit(1);
});
