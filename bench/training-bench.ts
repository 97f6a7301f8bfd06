/**
 * `npm run bench:training` — training scheduling on the ElasticFlow artifact's traces.
 *
 * For every trace (Fig. 10, Fig. 8(a) elasticVpollux_e, the ITP cluster traces, Philly on n4g8,
 * 195job) it simulates ours (`elasticflow`) and every registered baseline with the artifact's
 * model, prints a table of deadline-satisfactory ratios next to the authors' values, then a
 * best-effort mix with FaPES's metrics, an all-best-effort run (FaPES' setting) next to FaPES'
 * Table 1 ratios, a loaning row (utilisation with and without FaPES-Manager's loans), then the
 * per-round decision time on the largest trace.
 * Appends a section to bench/RESULTS.md and prints, as its last line,
 *   training: min_ratio_vs_elasticflow=<x> mean_ratio_vs_elasticflow=<y> traces=<n>
 * where each ratio is ours ÷ ElasticFlow's value on the same trace and cluster.
 *
 * Flags: --data-dir DIR, --policies a,b,c (baselines to run; default all), --cases substr,
 * --no-write (do not append to RESULTS.md).
 */
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { policyNames } from '../autoscaler/training/registry';
import { DEFAULT_DATA_DIR, loadClusterSpec, loadThroughputs, loadTrace, type GpuType, type TraceJob } from '../autoscaler/sim/training/data';
import { buildSimJobs, jctStats, percentile, runPolicy } from '../autoscaler/sim/training/run';
import type { SimResult } from '../autoscaler/sim/training/engine';
import { AUTHORS_NAME, CASES, loadReferences } from './training/cases';
import { FAPES_PAPER, runBestEffort, runLoaning } from './training/fapes-mix';

function flag(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : undefined;
}

const dataDir = flag('data-dir') ?? DEFAULT_DATA_DIR;
const policies = (flag('policies') ?? policyNames().join(',')).split(',');
if (!policies.includes('elasticflow')) policies.unshift('elasticflow');
const caseFilter = flag('cases');
const write = !process.argv.includes('--no-write');
const tables: Record<string, ReturnType<typeof loadThroughputs>> = {};
const tablesFor = (gpu: GpuType) => (tables[gpu] ??= loadThroughputs(dataDir, gpu));
const ref = loadReferences(dataDir);
const lines: string[] = [];
const say = (s = '') => {
  console.log(s);
  lines.push(s);
};
const f3 = (x: number | undefined) => (x === undefined || Number.isNaN(x) ? '-' : x.toFixed(3));

const started = Date.now();
say(`## Training scheduling (bench/training-bench.ts, ${new Date().toISOString().slice(0, 10)})`);
say();
say('Deadline-satisfactory ratio on the ElasticFlow artifact traces, simulated with the artifact\'s model (slot grid, table lookup, overheads).');
say('`ours` = `elasticflow` policy; `authors` = results_rerun_here.csv (rerun of the authors\' simulator) where it has a value, else the paper (p).');
say();
say(`| trace | cluster | slot | ${policies.join(' | ')} | authors EF | authors EDF | authors Gandiva | authors Tiresias | authors Themis | ours/EF |`);
say(`|${' --- |'.repeat(policies.length + 9)}`);

const ratios: number[] = [];
let largest: { name: string; jobs: number; result: SimResult; fapes?: SimResult } | undefined;
for (const c of CASES) {
  if (caseFilter && !c.name.includes(caseFilter)) continue;
  const trace = loadTrace(join(dataDir, c.trace));
  const jobs = buildSimJobs(trace, tablesFor(c.gpu), c.gpu);
  const cluster = loadClusterSpec(dataDir, c.cluster);
  const res: Record<string, SimResult> = {};
  for (const p of policies) res[p] = runPolicy({ jobs, cluster, slotSeconds: c.slot, policy: p });
  const authors = (p: string) => {
    const r = ref(c, AUTHORS_NAME[p] ?? p);
    return r ? `${f3(r.value)}${r.source === 'published' ? ' (p)' : ''}` : '-';
  };
  const efRef = ref(c, 'ef-accessctrl');
  const ratio = efRef ? res.elasticflow.ratio / efRef.value : NaN;
  if (efRef) ratios.push(ratio);
  say(
    `| ${c.name} | ${c.cluster} | ${c.slot} s | ${policies.map((p) => f3(res[p].ratio)).join(' | ')} | ${['elasticflow', 'edf', 'gandiva', 'tiresias', 'themis'].map(authors).join(' | ')} | ${f3(ratio)} |`,
  );
  if (!largest || trace.length > largest.jobs) largest = { name: c.name, jobs: trace.length, result: res.elasticflow, fapes: res.fapes };
}

// Best-effort mix (FaPES metrics): 195job on n16g8 (240 s slots), every second job without a
// deadline; jobs report an (assumed) gradient noise scale, so goodput-aware policies may
// co-adapt the batch size (FaPES goodput, linear LR scaling).
const GNS: Record<string, number> = { bert: 512, gpt2: 512, deepspeech2: 256, inception3: 1024, resnet50: 2048, vgg16: 1024 };
say();
say('### Best-effort mix (195job, n16g8, 240 s; every 2nd job best-effort; assumed GNS per model for batch co-adaptation)');
say();
say('| policy | SLO ratio | BE avg JCT (s) | BE p95 JCT (s) | BE avg queueing (s) | all avg JCT (s) | goodput (samples/s) |');
say('| --- | --- | --- | --- | --- | --- | --- |');
{
  const base = loadTrace(join(dataDir, 'elasticflow-traces/195job.csv'));
  const mix: TraceJob[] = base.map((j, i) => (i % 2 === 1 ? { ...j, deadline: undefined } : j));
  const jobs = buildSimJobs(mix, tablesFor('A100'), 'A100', { gnsByModel: GNS });
  const byId = new Map(mix.map((j) => [j.id, j]));
  const cluster = loadClusterSpec(dataDir, 'n16g8');
  for (const p of policies) {
    const r = runPolicy({ jobs, cluster, slotSeconds: 240, policy: p });
    const be = jctStats(r, (j) => j.deadline === undefined);
    const all = jctStats(r);
    // Goodput: useful work (iterations × submitted batch, i.e. samples at the submitted batch's
    // statistical efficiency) of finished jobs per second of the whole run.
    const first = Math.min(...mix.map((j) => j.submitTime));
    const work = r.jobs.filter((j) => j.endTime !== undefined).reduce((s, j) => s + byId.get(j.id)!.iterations * byId.get(j.id)!.batchSize, 0);
    const goodput = work / Math.max(1, r.makespan - first);
    say(`| ${p} | ${f3(r.ratio)} | ${be.avgJct.toFixed(0)} | ${be.p95Jct.toFixed(0)} | ${be.avgQueueing.toFixed(0)} | ${all.avgJct.toFixed(0)} | ${goodput.toFixed(1)} |`);
  }
}

// FaPES' own setting: no deadlines at all (195job, n16g8, 240 s), FaPES Table 1's metrics.
const FAPES_POLICIES = ['fapes', 'elasticflow', 'pollux', 'optimus'].filter((p) => policyNames().includes(p));
{
  const base = loadTrace(join(dataDir, 'elasticflow-traces/195job.csv'));
  const jobs = buildSimJobs(base, tablesFor('A100'), 'A100', { gnsByModel: GNS });
  const rows = runBestEffort(jobs, loadClusterSpec(dataDir, 'n16g8'), 240, FAPES_POLICIES);
  const fp = rows.find((r) => r.policy === 'fapes');
  say();
  say('### All best-effort (195job with no deadlines, n16g8, 240 s): FaPES Table 1 metrics; paper columns = FaPES÷baseline in Table 1');
  say();
  say('| policy | avg JCT (s) | p95 JCT (s) | avg queueing (s) | avg job goodput (samples/s) | fapes÷this avg JCT (ours / paper) | fapes÷this goodput (ours / paper) |');
  say('| --- | --- | --- | --- | --- | --- | --- |');
  for (const r of rows) {
    const pj = FAPES_PAPER.avgJct[r.policy] ? FAPES_PAPER.avgJct.fapes / FAPES_PAPER.avgJct[r.policy] : NaN;
    const pg = FAPES_PAPER.goodput[r.policy] ? FAPES_PAPER.goodput.fapes / FAPES_PAPER.goodput[r.policy] : NaN;
    say(
      `| ${r.policy} | ${r.avgJct.toFixed(0)} | ${r.p95Jct.toFixed(0)} | ${r.avgQueueing.toFixed(0)} | ${r.avgGoodput.toFixed(1)} | ` +
        `${fp ? f3(fp.avgJct / r.avgJct) : '-'} / ${f3(pj)} | ${fp ? f3(fp.avgGoodput / r.avgGoodput) : '-'} / ${f3(pg)} |`,
    );
  }
}

// Loaning (FaPES-Manager): 16 training + 4 inference servers (N_r^max = 20 %), inference demand
// from the Azure Functions 2019 per-minute load, 600 s rounds; the 195job mix as above.
{
  const base = loadTrace(join(dataDir, 'elasticflow-traces/195job.csv'));
  const mix: TraceJob[] = base.map((j, i) => (i % 2 === 1 ? { ...j, deadline: undefined } : j));
  const jobs = buildSimJobs(mix, tablesFor('A100'), 'A100', { gnsByModel: GNS });
  const rows = runLoaning(jobs, 16, 4, 8, 600, FAPES_POLICIES.filter((p) => p === 'fapes' || p === 'elasticflow'));
  say();
  say('### Loaning (n20g8 = 16 training + 4 inference servers; inference demand from Azure Functions 2019 per-minute load; 600 s rounds; 195job, every 2nd job best-effort)');
  say();
  say('| policy | loans | cluster util | training util | avg JCT (s) | avg queueing (s) | SLO ratio | reclaims | preempted jobs |');
  say('| --- | --- | --- | --- | --- | --- | --- | --- | --- |');
  for (const r of rows) {
    const u = r.row.result.utilisation;
    say(`| ${r.policy} | ${r.loaning ? 'yes' : 'no'} | ${f3(r.util)} | ${f3(r.trainUtil)} | ${r.row.avgJct.toFixed(0)} | ${r.row.avgQueueing.toFixed(0)} | ${f3(r.row.result.ratio)} | ${u.reclaims} | ${u.preemptions} |`);
  }
  const p = FAPES_PAPER.loan;
  say();
  say(`FaPES paper (Table 3, 10-min rounds, 1000-server simulation): util ${p.withUtil} with loans vs ${p.withoutUtil} without; JCT ${p.withJctMin} vs ${p.withoutJctMin} min.`);
}

if (largest) {
  const ms = largest.result.decisionMs;
  say();
  say(
    `Decision time per round (admission + allocation + placement), elasticflow on the largest trace (${largest.name}, ${largest.jobs} jobs, ${ms.length} rounds): p50=${percentile(ms, 0.5).toFixed(2)} ms p90=${percentile(ms, 0.9).toFixed(2)} ms max=${Math.max(...ms).toFixed(1)} ms (target p90 ≤ 58 ms).`,
  );
  const fm = largest.fapes?.decisionMs;
  if (fm) say(`Same for fapes: p50=${percentile(fm, 0.5).toFixed(2)} ms p90=${percentile(fm, 0.9).toFixed(2)} ms max=${Math.max(...fm).toFixed(1)} ms over ${fm.length} rounds (FaPES paper: p90 580 ms).`);
}
say();
say(`Nothing subsampled; wall time ${((Date.now() - started) / 1000).toFixed(0)} s.`);
const min = ratios.length ? Math.min(...ratios) : NaN;
const mean = ratios.length ? ratios.reduce((a, b) => a + b, 0) / ratios.length : NaN;
const last = `training: min_ratio_vs_elasticflow=${min.toFixed(3)} mean_ratio_vs_elasticflow=${mean.toFixed(3)} traces=${ratios.length}`;
say();
say('```');
say(last);
say('```');
if (write) appendFileSync(join(__dirname, 'RESULTS.md'), `\n${lines.join('\n')}\n`);
console.log(last);
