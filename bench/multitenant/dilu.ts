import { INSTANCE_COUNTS, loadSchedEvents, SCHED_EVENTS_DIR, type SchedEvent } from '../../autoscaler/sim/dilu-sched/events';
import { makeSchedPolicy, type SchedPolicyName, type SchedPolicyOptions } from '../../autoscaler/sim/dilu-sched/policies';
import { simulate, type SchedResult } from '../../autoscaler/sim/dilu-sched/simulator';
import { DILU_AUTHORS, DILU_AUTHORS_FRAG_3200, DILU_AUTHORS_GAMMA_3200, type AuthorsPolicy } from './dilu-authors';

/**
 * Dilu's scheduling simulator, side by side with the authors' figures (issue 24): per instance
 * count, peak and time-weighted average GPUs and SM / memory fragmentation at the peak for Dilu
 * (our port), INFless-l, INFless-r, Exclusive (= the artifact's Kubernetes default) and ours; then
 * Dilu's γ sweep at 3,200. Policies whose ties follow a Python set's order in the artifact run
 * with `seeds` per-run GPU orders (seeds 1..n) and report the mean, as the authors' 3,200 row is
 * a mean of 5 runs.
 */

export interface DiluComparisonOptions {
  /** Instance counts to run (default: all in the data). */
  readonly counts?: readonly number[];
  /** Counts ours is judged on (default 1,600 and 3,200; the rest tuned it). */
  readonly reportCounts?: readonly number[];
  /** Runs (tie orders) per set-ordered policy (default 5). */
  readonly seeds?: number;
  /** Runs per γ in the sweep (default 1, tie order seed 1; 0 skips the sweep). */
  readonly gammaSeeds?: number;
  readonly dataDir?: string;
}

export interface DiluRow {
  readonly count: number;
  readonly policy: SchedPolicyName;
  readonly peak: number;
  readonly avg: number;
  readonly fragSm: number;
  readonly fragMem: number;
  readonly failures: number;
  readonly movesPerHour: number;
}

export interface DiluComparison {
  readonly markdown: string;
  /** Worst relative error of the Dilu port's peak and average against the authors', over all counts. */
  readonly fidelityMaxError: number;
  /** The same for the baselines (INFless-l, INFless-r, Exclusive). */
  readonly baselineMaxError: number;
  /** Ours ÷ Dilu port, peak GPUs, worst over the report counts. */
  readonly gpusVsDilu: number;
  /** Ours ÷ Dilu port, time-average GPUs, worst over the report counts. */
  readonly gpusVsDiluAvg: number;
  /** Ours' failures minus Dilu's, summed over all counts (≤ 0 is the target). */
  readonly extraFailures: number;
  readonly rows: readonly DiluRow[];
}

const POLICIES: readonly SchedPolicyName[] = ['dilu', 'infless-l', 'infless-r', 'exclusive', 'ours'];
const SET_ORDERED = new Set<SchedPolicyName>(['dilu', 'infless-l', 'infless-r']);
const LABEL: Record<SchedPolicyName, string> = {
  'dilu': 'Dilu (port)',
  'infless-l': 'INFless-l',
  'infless-r': 'INFless-r',
  'exclusive': 'Exclusive / Kubernetes default',
  'ours': 'ours',
};

function meanRun(ev: readonly SchedEvent[], name: SchedPolicyName, seeds: number, o: SchedPolicyOptions = {}): Omit<DiluRow, 'count' | 'policy'> {
  const runs: SchedResult[] = [];
  const n = SET_ORDERED.has(name) ? Math.max(1, seeds) : 1;
  for (let s = 1; s <= n; s++) runs.push(simulate(ev, makeSchedPolicy(name, { ...o, seed: s })));
  const m = (f: (r: SchedResult) => number) => runs.reduce((a, r) => a + f(r), 0) / runs.length;
  return {
    peak: m((r) => r.peak),
    avg: m((r) => r.timeAvg),
    fragSm: m((r) => r.fragAtPeak.sm),
    fragMem: m((r) => r.fragAtPeak.mem),
    failures: m((r) => r.failures),
    movesPerHour: m((r) => r.movesPerHour),
  };
}

/**
 * GPUs held by training parts: the most at once and the time-weighted mean (as the simulator
 * weighs samples). A floor for any placement here: two parts of 25–40 GB never share a 40 GB GPU.
 */
export function trainingFloor(ev: readonly SchedEvent[]): { peak: number; avg: number } {
  let now = 0;
  let peak = 0;
  let area = 0;
  for (let i = 0; i < ev.length; i++) {
    const e = ev[i];
    if (e.inst.type === 'training') now += (e.action === 'start' ? 1 : -1) * e.inst.gpuNum;
    peak = Math.max(peak, now);
    if (i + 1 < ev.length) area += now * (ev[i + 1].t - e.t);
  }
  const span = ev.length ? ev[ev.length - 1].t - ev[0].t : 0;
  return { peak, avg: span > 0 ? area / span : now };
}

const rel = (ours: number, theirs: number) => Math.abs(ours - theirs) / theirs;
const f1 = (x: number) => (Number.isInteger(x) ? String(x) : x.toFixed(1));

export async function runDiluComparison(opts: DiluComparisonOptions = {}): Promise<DiluComparison> {
  const counts = opts.counts ?? INSTANCE_COUNTS;
  const report = opts.reportCounts ?? [1600, 3200];
  const seeds = opts.seeds ?? 5;
  const gammaSeeds = opts.gammaSeeds ?? 1;
  const rows: DiluRow[] = [];
  const lines: string[] = [];
  let fidelity = 0;
  let baseErr = 0;
  let vsPeak = 0;
  let vsAvg = 0;
  let extraFailures = 0;
  lines.push('### Dilu scheduling simulator: GPUs used (peak / time-weighted average), fragmentation at the peak');
  lines.push('');
  lines.push(`Inputs \`${'../shared/data/traces/dilu_sched_events'}/instances-N.jsonl\`; 4,000 GPUs of 40 GB (Exclusive: 12,000, as its artifact file); ` +
    `set-ordered policies are the mean of ${seeds} tie orders. "authors" = the artifact's figures (issue 24). ` +
    'Ours moves inference and LLM replicas (each move books the new place at once and frees the old one after a cold start: 10 s, LLM 30 s).');
  lines.push('');
  lines.push('| instances | policy | peak | authors | err | time-avg | authors | err | frag SM / mem | failures | moves/h |');
  lines.push('| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |');
  for (const count of counts) {
    const ev = loadSchedEvents(count, opts.dataDir ?? SCHED_EVENTS_DIR);
    const byPolicy = new Map<SchedPolicyName, DiluRow>();
    for (const name of POLICIES) {
      const r = { count, policy: name, ...meanRun(ev, name, seeds) };
      rows.push(r);
      byPolicy.set(name, r);
      const a = name === 'ours' ? undefined : DILU_AUTHORS[count]?.[name as AuthorsPolicy];
      const ep = a ? rel(r.peak, a.peak) : NaN;
      const ea = a ? rel(r.avg, a.avg) : NaN;
      if (a && name === 'dilu') fidelity = Math.max(fidelity, ep, ea);
      else if (a) baseErr = Math.max(baseErr, ep, ea);
      const pct = (e: number) => (Number.isNaN(e) ? '—' : `${(e * 100).toFixed(1)} %`);
      lines.push(`| ${count} | ${LABEL[name]} | ${f1(r.peak)} | ${a ? a.peak : '—'} | ${pct(ep)} | ` +
        `${r.avg.toFixed(1)} | ${a ? a.avg : '—'} | ${pct(ea)} | ` +
        `${r.fragSm.toFixed(2)} / ${r.fragMem.toFixed(2)} | ${f1(r.failures)} | ${r.movesPerHour.toFixed(0)} |`);
    }
    const d = byPolicy.get('dilu')!;
    const o = byPolicy.get('ours')!;
    const floor = trainingFloor(ev);
    lines.push(`| ${count} | floor: GPUs held by training parts | ${floor.peak} | | | ${floor.avg.toFixed(1)} | | | | | |`);
    extraFailures += o.failures - d.failures;
    if (report.includes(count)) {
      vsPeak = Math.max(vsPeak, o.peak / d.peak);
      vsAvg = Math.max(vsAvg, o.avg / d.avg);
    }
  }
  lines.push('');
  const f = DILU_AUTHORS_FRAG_3200;
  lines.push(`Authors' fragmentation at the 3,200 peak (SM / mem): Dilu ${f.dilu.sm} / ${f.dilu.mem}, ` +
    `INFless-l ${f['infless-l'].sm} / ${f['infless-l'].mem}, INFless-r ${f['infless-r'].sm} / ${f['infless-r'].mem}, ` +
    `Exclusive ${f.exclusive.sm} / ${f.exclusive.mem}.`);
  if (gammaSeeds > 0 && counts.includes(3200)) {
    const ev = loadSchedEvents(3200, opts.dataDir ?? SCHED_EVENTS_DIR);
    lines.push('');
    lines.push(`### Dilu's γ sweep at 3,200 (Ω = 1; peak GPUs, mean of ${gammaSeeds} tie orders)`);
    lines.push('');
    lines.push('| γ | port | authors | err |');
    lines.push('| --- | --- | --- | --- |');
    for (const { gamma, peak } of DILU_AUTHORS_GAMMA_3200) {
      const r = meanRun(ev, 'dilu', gammaSeeds, { dilu: { gamma } });
      lines.push(`| ${gamma} | ${f1(r.peak)} | ${peak} | ${(rel(r.peak, peak) * 100).toFixed(1)} % |`);
    }
  }
  lines.push('');
  lines.push(`Dilu port's worst error against the authors: ${(fidelity * 100).toFixed(2)} % (baselines: ${(baseErr * 100).toFixed(2)} %). ` +
    `Ours ÷ Dilu port over ${report.join(', ')}: peak ${vsPeak.toFixed(3)}, time-average ${vsAvg.toFixed(3)}; extra failures ${extraFailures}.`);
  return {
    markdown: lines.join('\n') + '\n',
    fidelityMaxError: fidelity,
    baselineMaxError: baseErr,
    gpusVsDilu: vsPeak,
    gpusVsDiluAvg: vsAvg,
    extraFailures,
    rows,
  };
}

if (require.main === module) {
  const t0 = Date.now();
  void runDiluComparison().then((r) => {
    process.stdout.write(r.markdown);
    process.stdout.write(`dilu: fidelity_max_error=${r.fidelityMaxError.toFixed(4)} gpus_vs_dilu=${r.gpusVsDilu.toFixed(3)} ` +
      `gpus_vs_dilu_avg=${r.gpusVsDiluAvg.toFixed(3)} (${((Date.now() - t0) / 1000).toFixed(1)} s)\n`);
  });
}
