/**
 * `npm run bench:live`: the real platform (`mlfaas up`) once per policy, the example ONNX functions
 * (digits-classify light, image-classify heavy) under open-loop Poisson load replaying segments of
 * the Dilu bursty and periodic traces scaled to this machine; measured at the client, over
 * BENCH_LIVE_SEEDS seeds (each seed draws other arrivals; every policy sees the same ones). Writes
 * bench/results/live.md and bench/results/live.svg; compares with the simulator fed this machine's
 * measured profiles and the same arrivals. Env: BENCH_LIVE_SECONDS (segment length, default 180),
 * BENCH_LIVE_POLICIES (comma list), BENCH_LIVE_SEGMENTS (comma list of bursty, periodic),
 * BENCH_LIVE_SEED (first seed, 42), BENCH_LIVE_SEEDS (how many, default 3), BENCH_LIVE_PEAK
 * (digits peak req/s, default 300), BENCH_LIVE_PEAK_IMAGE (default 48), BENCH_LIVE_COLD_WAIT (s to
 * wait for the heavy function to reach zero before a window, default 60), BENCH_LIVE_PROFILE_MODE
 * (the platform's MLFAAS_PROFILE_MODE: `predicted`, its default, or `measured`).
 *
 * Cold starts are measured: before every window the bench waits until image-classify (scale to
 * zero after 20 s idle) has no replica, so its first request in the window pays the cold start
 * and the replica counts as a start (a window that could not start cold is marked in the table).
 *
 * The peaks: image-classify serves 67-75 req/s on a whole core at batch 1 (its end-to-end
 * profile). At a peak of 24 req/s (a third of that) every policy stayed at one replica on every
 * segment (2026-11-24: hybrid raised the quota, KPA's concurrency stayed under its target, the
 * others' one replica sufficed), so nothing tested scaling out. At 48 req/s (about 0.7 of a core)
 * the bursts outgrow a fixed partition (static-share's profiled share, two replicas at most) and
 * push KPA's concurrency (target 1 at 70 % utilisation) past one replica, while one whole core
 * still serves them: scaling out or up is needed, and possible. digits-classify peaks at 300 req/s,
 * a quarter of a core. The gateway and this load generator share the same two cores (at 600 / 16,
 * hybrid 7.6 % and static-share 10.0 % violations, most of them digits-classify's, from CPU
 * contention).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { ScalingEvents } from '../gateway/registry/scaling-events';
import { DEFAULT_NAMESPACE } from '../gateway/lib/names';
import { readTrace } from '../autoscaler/sim/traces';
import { lineChart } from './inference/svg';
import { table } from './lib/results';
import { allocationSeries, integrateCost, Sample, scaleToZeroS } from './live/cost';
import { fmt, fmtSeeds, fmtViolationRatios, Outcome, overSeeds, p99Series, ratio, summarise, violationRatio, violationSeconds, VIOLATION_FLOOR,
  worstRelError } from './live/outcomes';
import { FUNCTIONS, sampleReplicas, startPlatform, waitProfile } from './live/platform';
import { countsPerSecond, poissonSchedule, segmentRates } from './live/schedule';
import { simulateSegment } from './live/sim-check';

const SECONDS = Number(process.env.BENCH_LIVE_SECONDS ?? 180);
const POLICIES = (process.env.BENCH_LIVE_POLICIES ?? 'hybrid,kpa,static-share,openfaas-rps').split(',');
const SEED = Number(process.env.BENCH_LIVE_SEED ?? 42);
const SEEDS = Array.from({ length: Math.max(1, Number(process.env.BENCH_LIVE_SEEDS ?? 3)) }, (_, i) => SEED + i);
const PEAK = { 'digits-classify': Number(process.env.BENCH_LIVE_PEAK ?? 300),
  'image-classify': Number(process.env.BENCH_LIVE_PEAK_IMAGE ?? 48) } as Record<string, number>;
const TRACES = join(__dirname, '..', '..', 'shared', 'data', 'traces', 'dilu_workloads');
/** The platform's deploy-time profile (MLFAAS_PROFILE_MODE): `predicted` (its default) or `measured`. */
const PROFILE_MODE = process.env.BENCH_LIVE_PROFILE_MODE;
/** Bounded wait for scale to zero after the last window (the "to zero" column). */
const ZERO_WAIT_S = Number(process.env.BENCH_LIVE_ZERO_WAIT ?? 60);
/** Bounded wait, before each window, for the heavy function to be at zero (so the window starts cold). */
const COLD_WAIT_S = Number(process.env.BENCH_LIVE_COLD_WAIT ?? 60);
const HEAVY = 'image-classify';
const log = (l: string) => process.stderr.write(`[bench:live] ${l}\n`);

/** Segments: the first SECONDS s of Dilu bursty and periodic (per-second base RPS). */
const SEGMENTS = (process.env.BENCH_LIVE_SEGMENTS ?? 'bursty,periodic').split(',').map((w) => ({ name: w,
  counts: readTrace(join(TRACES, `${w}.txt`)).series[0].counts }));

interface Measured {
  policy: string;
  seed: number;
  segment: string;
  fn: string;
  outs: Outcome[];
  samples: Sample[];
  t0: number;
  zeroS?: number;
  /** The heavy function had no replica when the window began (its first start is inside it). */
  cold: boolean;
}

/** Sends every scheduled request at its time (open loop), recording what came back. */
async function replay(url: string, fn: (typeof FUNCTIONS)[number], sched: number[], t0: number, agent: Agent): Promise<Outcome[]> {
  const outs: Outcome[] = [];
  const body = fn.body();
  const pending: Promise<void>[] = [];
  for (const at of sched) {
    const wait = t0 + at - Date.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    pending.push(
      request(`${url}/function/${fn.name}`, { method: 'POST', body, headers: { 'content-type': 'application/json' }, dispatcher: agent, headersTimeout: 30_000,
        bodyTimeout: 30_000 })
        .then(async (r) => {
          await r.body.dump();
          outs.push({ at, latencyMs: Date.now() - (t0 + at), status: r.statusCode });
        })
        .catch(() => void outs.push({ at, latencyMs: Date.now() - (t0 + at), status: 0 })),
    );
  }
  await Promise.all(pending);
  return outs.sort((a, b) => a.at - b.at);
}

/** Schedules by seed, then segment, then function. */
type Schedules = Record<number, Record<string, Record<string, number[]>>>;

/** Waits (bounded) until `name` has no replica; true when it got there. */
async function waitZero(p: Awaited<ReturnType<typeof startPlatform>>, name: string, seconds: number): Promise<boolean> {
  const end = Date.now() + seconds * 1000;
  for (;;) {
    if (!(await sampleReplicas(p.redis, name)).replicas.length) return true;
    if (Date.now() >= end) return false;
    await new Promise((r) => setTimeout(r, 500));
  }
}

async function runPolicy(policy: string, schedules: Schedules, profiles: Record<string, unknown>): Promise<Measured[]> {
  const dir = `/tmp/bench-live-${process.pid}-${policy}`;
  const t = Date.now();
  const p = await startPlatform(dir, policy, PROFILE_MODE ? { MLFAAS_PROFILE_MODE: PROFILE_MODE } : {}, log);
  log(`${policy}: platform on ${p.url} (${((Date.now() - t) / 1000).toFixed(0)} s)`);
  const agent = new Agent({ connections: 256, keepAliveTimeout: 30_000 });
  const res: Measured[] = [];
  try {
    for (const f of FUNCTIONS) {
      // the heavy function starts at zero: one request brings a replica (and its profile) up; the
      // windows below start only once it is back at zero, so this warm-up is not measured
      await request(`${p.url}/function/${f.name}`, { method: 'POST', body: f.body(), headers: { 'content-type': 'application/json' },
        headersTimeout: 120_000 }).then((r) => r.body.dump()).catch(() => undefined);
      const prof = await waitProfile(p.url, f.name, 120_000);
      if (prof && !profiles[f.name]) profiles[f.name] = prof;
      log(`${policy}: ${f.name} profile (${prof?.source ?? 'measured'}, ${prof?.measuredPoints ?? prof?.points.length ?? 0} points measured) ` +
        `${prof ? prof.points.map((x) => `b${x.batch}@q${x.quota}=${Math.round(x.throughput)}/s`).join(' ') : 'missing'}`);
    }
    const windows = SEEDS.flatMap((seed) => SEGMENTS.map((seg) => ({ seed, seg })));
    for (const [wi, { seed, seg }] of windows.entries()) {
      // cold starts inside the window: the heavy function must be at zero when it begins
      const tw = Date.now();
      const cold = await waitZero(p, HEAVY, COLD_WAIT_S);
      log(`${policy} seed ${seed} ${seg.name}: ${HEAVY} ` +
        `${cold ? `at zero after ${((Date.now() - tw) / 1000).toFixed(0)} s` : `still up after ${COLD_WAIT_S} s (this window starts warm)`}`);
      const t0 = Date.now() + 500;
      const samples: Record<string, Sample[]> = Object.fromEntries(FUNCTIONS.map((f) => [f.name, []]));
      let sampling = true;
      const sampler = (async () => {
        while (sampling) {
          for (const f of FUNCTIONS) samples[f.name].push(await sampleReplicas(p.redis, f.name));
          await new Promise((r) => setTimeout(r, 250));
        }
      })();
      const outs = await Promise.all(FUNCTIONS.map((f) => replay(p.url, f, schedules[seed][seg.name][f.name], t0, agent)));
      const endMs = t0 + SECONDS * 1000;
      // after the last window: bounded wait for the idle heavy function to go back to zero
      const lastWin = wi === windows.length - 1;
      const zeroEnd = Date.now() + (lastWin ? ZERO_WAIT_S : 0) * 1000;
      while (Date.now() < zeroEnd && samples[HEAVY].at(-1)?.replicas.length) await new Promise((r) => setTimeout(r, 500));
      sampling = false;
      await sampler;
      FUNCTIONS.forEach((f, i) => {
        // cost over the window itself (from t0: the sample taken just before it shows the replicas
        // already up); the wait after it only serves the scale-to-zero time
        const within = samples[f.name].filter((s) => s.t <= endMs);
        res.push({ policy, seed, segment: seg.name, fn: f.name, outs: outs[i], samples: within, t0, cold,
          zeroS: f.minScale === 0 && lastWin ? scaleToZeroS(samples[f.name], endMs) : undefined });
      });
      const m = res.slice(-FUNCTIONS.length).map((r) => {
        const c = integrateCost(r.samples);
        return `${r.fn} ${summarise(r.outs, FUNCTIONS.find((x) => x.name === r.fn)!.sloMs).violations}/${r.outs.length} viol ${c.coreSeconds.toFixed(0)} ` +
          `core-s ${c.coldStarts} starts max ${c.maxReplicas} replicas`;
      });
      log(`${policy} seed ${seed} ${seg.name}: ${m.join('; ')}`);
      // where each function's replicas ran and when it missed its SLO (for reading a result, not in the table)
      for (const r of res.slice(-FUNCTIONS.length)) {
        const devices = [...new Set(r.samples.flatMap((x) => x.replicas.map((y) => `${y.device ?? 'unplaced'}@${y.quota}`)))].join(' ');
        log(`  ${r.fn}: allotments ${devices || '—'}; violations by second ${violationSeconds(r.outs, FUNCTIONS.find((x) => x.name === r.fn)!.sloMs) || '—'}`);
      }
    }
    // the autoscaler's decisions with their reasons, oldest first, beside the run's data (not committed)
    const events = new ScalingEvents(p.redis);
    for (const f of FUNCTIONS) {
      const list = (await events.list({ name: f.name, namespace: DEFAULT_NAMESPACE }, 1000)).reverse();
      writeFileSync(join(dir, `events-${f.name}.txt`), list.map((e) => ScalingEvents.summary(e)).join('\n') + '\n');
    }
    log(`${policy}: scaling events in ${dir}/events-*.txt`);
  } finally {
    await agent.close();
    await p.stop();
  }
  return res;
}

async function main() {
  const started = Date.now();
  const load0 = loadavg();
  const schedules: Schedules = {};
  for (const seed of SEEDS) {
    schedules[seed] = {};
    SEGMENTS.forEach((seg, si) => {
      schedules[seed][seg.name] = {};
      FUNCTIONS.forEach((f, fi) => {
        schedules[seed][seg.name][f.name] = poissonSchedule(segmentRates(seg.counts, 0, SECONDS, PEAK[f.name]), seed + 100 * si + fi);
      });
    });
  }
  const profiles: Record<string, any> = {};
  const all: Measured[] = [];
  for (const pol of POLICIES) all.push(...(await runPolicy(pol, schedules, profiles)));

  // ---- simulator check: same arrivals, this machine's measured profiles, CPU devices = cores
  // (its inputs are kept, so the check can be re-run and studied without the live runs)
  const simInput = `/tmp/bench-live-${process.pid}-sim-input.json`;
  const countsOf = (seed: number, seg: string) => Object.fromEntries(FUNCTIONS.map((f) => [f.name, countsPerSecond(schedules[seed][seg][f.name], SECONDS)]));
  writeFileSync(simInput,
    JSON.stringify({ seconds: SECONDS, seed: SEED, profiles,
      counts: Object.fromEntries(SEEDS.flatMap((seed) => SEGMENTS.map((seg) => [`${seg.name} seed ${seed}`, countsOf(seed, seg.name)]))) }));
  log(`simulator inputs in ${simInput}`);
  const sim: Record<string, { violations: number; cost: number }> = {};
  for (const pol of POLICIES)
    for (const seed of SEEDS)
      for (const seg of SEGMENTS) {
        const r = simulateSegment(pol, profiles, countsOf(seed, seg.name), seed);
        sim[`${pol}/${seed}/${seg.name}`] = { violations: r.violations, cost: r.gpuSeconds };
      }

  // ---- tables
  /** One policy's figures pooled over segments and functions, for one seed (or all). */
  const agg = (pol: string, seed?: number, seg?: string) => {
    const ms = all.filter((m) => m.policy === pol && (seed === undefined || m.seed === seed) && (!seg || m.segment === seg));
    let v = 0, n = 0, d = 0, cost = 0, cold = 0, maxReplicas = 0;
    for (const m of ms) {
      const s = summarise(m.outs, FUNCTIONS.find((f) => f.name === m.fn)!.sloMs);
      const c = integrateCost(m.samples);
      v += s.violations; n += s.requests; d += s.dropped; cost += c.coreSeconds; cold += c.coldStarts;
      maxReplicas = Math.max(maxReplicas, c.maxReplicas);
    }
    return { v, n, d, cost, cold, maxReplicas };
  };
  const rows: Array<Array<string | number>> = [];
  for (const m of all) {
    const f = FUNCTIONS.find((x) => x.name === m.fn)!;
    const s = summarise(m.outs, f.sloMs);
    const c = integrateCost(m.samples);
    const lastWin = m.seed === SEEDS[SEEDS.length - 1] && m.segment === SEGMENTS[SEGMENTS.length - 1].name;
    rows.push([m.policy, m.seed, m.segment, `${m.fn} (SLO ${f.sloMs} ms)`, s.requests, s.violations,
      `${((100 * s.violations) / Math.max(1, s.requests)).toFixed(1)}%`, s.dropped, fmt(s.p50), fmt(s.p99), c.coreSeconds.toFixed(1),
      `${c.coldStarts}${f.minScale === 0 && !m.cold ? ' (warm at start)' : ''}`, c.maxReplicas,
      m.zeroS === undefined ? (f.minScale === 0 && lastWin ? `> ${ZERO_WAIT_S}` : '—') : m.zeroS.toFixed(1)]);
  }
  // per policy: mean [min–max] over seeds of the pooled figures
  const bySeed = (pol: string, pick: (a: ReturnType<typeof agg>) => number) => overSeeds(SEEDS.map((seed) => pick(agg(pol, seed))));
  const polRows = POLICIES.map((pol) => [
    pol,
    fmtSeeds(bySeed(pol, (a) => (100 * a.v) / Math.max(1, a.n))),
    fmtSeeds(bySeed(pol, (a) => a.v), 1),
    fmtSeeds(bySeed(pol, (a) => a.cost), 1),
    fmtSeeds(bySeed(pol, (a) => a.cold), 1),
    Math.max(...SEEDS.map((seed) => agg(pol, seed).maxReplicas)),
  ]);
  const simRows: Array<Array<string | number>> = [];
  const costPairs: Array<{ predicted: number; measured: number }> = [];
  for (const pol of POLICIES) {
    const meas = agg(pol);
    const keys = SEEDS.flatMap((seed) => SEGMENTS.map((s) => `${pol}/${seed}/${s.name}`));
    const pv = keys.reduce((a, k) => a + sim[k].violations, 0);
    const pc = keys.reduce((a, k) => a + sim[k].cost, 0);
    costPairs.push({ predicted: pc, measured: meas.cost });
    simRows.push([pol, `${((100 * meas.v) / Math.max(1, meas.n)).toFixed(1)}%`, `${((100 * pv) / Math.max(1, meas.n)).toFixed(1)}%`, meas.cost.toFixed(1),
      pc.toFixed(1), fmt(meas.cost > 0 ? (pc - meas.cost) / meas.cost : NaN)]);
  }
  const has = (p: string) => POLICIES.includes(p);
  // per seed, baseline ÷ hybrid; 0 vs 0 violations is "no discrimination", never a ratio
  const violRatios = (base: string) => (has(base) && has('hybrid') ? SEEDS.map((seed) => violationRatio(agg(base, seed).v, agg('hybrid', seed).v,
    VIOLATION_FLOOR)) : []);
  const vsStatic = violRatios('static-share');
  const vsKpa = violRatios('kpa');
  const costVsKpa = has('kpa') && has('hybrid') ? SEEDS.map((seed) => ratio(agg('kpa', seed).cost, agg('hybrid', seed).cost)) : [];
  const ratioCell = (xs: Array<number | undefined>) => (xs.length ? fmtViolationRatios(xs) : 'n/a');
  const costCell = (xs: number[]) => {
    const s = overSeeds(xs);
    return !s.n ? 'n/a' : s.n === 1 ? s.mean.toFixed(2) : `${s.mean.toFixed(2)}[${s.min.toFixed(2)}-${s.max.toFixed(2)}]`;
  };
  const perSeedLine = (name: string, xs: Array<number | undefined>) =>
    xs.length
      ? `${name}: ${SEEDS.map((seed, i) => `seed ${seed} ${xs[i] === undefined ? 'no discrimination (0 vs 0)' : fmt(xs[i]!)}`).join(', ')}`
      : `${name}: n/a (a policy not run)`;
  const e = worstRelError(costPairs);
  const runtimeS = (Date.now() - started) / 1000;

  // ---- plot: the bursty segment, load / allocation / p99 per policy (digits-classify)
  const colors: Record<string, string> = { hybrid: '#d62728', kpa: '#1f77b4', 'static-share': '#2ca02c', 'openfaas-rps': '#9467bd' };
  const bins = SECONDS;
  const plotSeg = SEGMENTS[0].name;
  const pick = (pol: string, fn: string) => all.find((m) => m.policy === pol && m.seed === SEEDS[0] && m.segment === plotSeg && m.fn === fn);
  const svg = lineChart(`bench:live, Dilu ${plotSeg} segment, seed ${SEEDS[0]}, digits-classify: load, allocated cores, p99 (1 s bins)`, [
    { ylabel: 'req/s', lines: [{ name: 'load', color: '#000', ys: countsPerSecond(schedules[SEEDS[0]][plotSeg]['digits-classify'], bins) }] },
    { ylabel: 'cores (all fns)', lines: POLICIES.map((pol) => ({ name: pol, color: colors[pol] ?? '#777',
      ys: FUNCTIONS.map((f) => { const m = pick(pol, f.name); return m ? allocationSeries(m.samples, m.t0, 1000, bins) : new Array(bins).fill(0); })
        .reduce((a, b) => a.map((v, i) => (v || 0) + (b[i] || 0))) })) },
    { ylabel: 'p99 ms', lines: POLICIES.map((pol) => ({ name: pol, color: colors[pol] ?? '#777',
      ys: p99Series(pick(pol, 'digits-classify')?.outs ?? [], 1000, bins) })) },
  ]);
  const outDir = join(__dirname, 'results');
  mkdirSync(outDir, { recursive: true });
  writeFileSync(join(outDir, 'live.svg'), svg);
  const last = `live: violation_ratio_vs_static=${ratioCell(vsStatic)} cost_ratio_vs_kpa=${costCell(costVsKpa)} kpa_violation_ratio=${ratioCell(vsKpa)} ` +
    `sim_cost_error=${fmt(e)} seeds=${SEEDS.length}`;
  const md = [
    `# bench:live (${new Date().toISOString()})`,
    `Real platform (\`mlfaas up\`), ${cpus().length} cores, load average before ${load0.map((l) => l.toFixed(2)).join(' ')}, after ` +
      `${loadavg().map((l) => l.toFixed(2)).join(' ')} (a shared, busy machine). Segments: first ${SECONDS} s of Dilu ` +
      `${SEGMENTS.map((s) => s.name).join(' and ')}, Poisson arrivals, seeds ${SEEDS.join(', ')}, peaks digits ${PEAK['digits-classify']} req/s, image ` +
      `${PEAK['image-classify']} req/s; same arrivals for every policy. Before every window the bench waits (≤ ${COLD_WAIT_S} s) for image-classify to be ` +
      `at zero, so its cold start is inside the window. Runtime ${runtimeS.toFixed(0)} s.`,
    'Violation = over the SLO, or failed / 429 / 5xx (dropped also counted alone). Cost = Σ replicas cores × quota × time alive (sampled every 250 ms from ' +
      'Redis, starting replicas included). Starts = replicas first seen after the window began (cold starts; "warm at start": image-classify was still up ' +
      'when the window began). Zero = s from the end of the load to no replica (bounded wait).',
    `## Per policy over ${SEEDS.length} seeds\n\nEach seed's figures pooled over segments and functions; mean [min–max] over the seeds (not a confidence ` +
      `interval: ${SEEDS.length} seeds).\n\n` +
      table(['policy', 'viol %', 'violations', 'core-s', 'starts', 'max replicas (any fn)'], polRows),
    '## Per window\n\n' + table(['policy', 'seed', 'segment', 'function', 'requests', 'violations', 'viol %', 'dropped', 'p50 ms', 'p99 ms', 'core-s', 'starts',
      'max replicas', 'to zero s'], rows),
    `## Simulator check (all seeds, segments and functions)\n\nThe simulator (\`autoscaler/sim/engine.ts\`, configured in \`bench/live/sim-check.ts\`) given ` +
      `the measured profiles, the same per-second arrivals, devices = cores, 3 s cold start, the heavy function at zero when a window starts, quotas served ` +
      `as CFS bandwidth (100 ms period), the live online correction.\n\n` +
      table(['policy', 'violations measured', 'violations predicted', 'core-s measured', 'core-s predicted', 'cost rel. error'], simRows),
    [
      `Ratios are baseline ÷ hybrid per seed, then mean[min-max] over seeds. Where both policies had 0 violations in a seed the load did not tell them ` +
        `apart: that seed says "no discrimination" and gives no ratio (\`/k-of-n\`: only k seeds discriminated; \`no-discrimination\`: none did). One side ` +
        `0: it is floored at ${VIOLATION_FLOOR}. n/a = a policy not run.`,
      `- ${perSeedLine('violation_ratio_vs_static', vsStatic)}`,
      `- ${perSeedLine('kpa_violation_ratio', vsKpa)}`,
      `- cost_ratio_vs_kpa: ${costVsKpa.length ? SEEDS.map((seed, i) => `seed ${seed} ${fmt(costVsKpa[i])}`).join(', ') : 'n/a'}`,
    ].join('\n'),
    'Plot: `bench/results/live.svg`.',
    last,
  ].join('\n\n');
  writeFileSync(join(outDir, 'live.md'), md + '\n');
  console.log(md); // ends with the summary line
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
