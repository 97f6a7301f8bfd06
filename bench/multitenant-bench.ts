/**
 * bench:multitenant (issue 24): a fixed cluster shared by several tenants.
 * 1. Faro (EuroSys '25): our port of its simulator and policies on the authors' 10-job workload at
 *    36 / 32 / 16 replicas, beside the authors' figures (bench/multitenant/faro.ts), and our own
 *    fixed-cluster controller (autoscaler/multitenant/mlfaas) in the same simulator and seeds.
 * 2. Dilu (ASPLOS '25): our port of its scheduling simulator on the authors' instance events, with
 *    its baselines and our placement (bench/multitenant/dilu.ts).
 * 3. Dilu in our inference simulator: its profiler, lazy scaling and Algorithm-1 placement vs our
 *    hybrid and our packed placement (bench/multitenant/dilu-inference.ts).
 * Writes bench/results/multitenant.md; the last line is
 * `multitenant: faro_fidelity_max_error=<a> lost_utility_vs_faro_best=<b> dilu_fidelity_max_error=<c> gpus_vs_dilu=<d> seeds=<n>`.
 * BENCH_MULTITENANT_SEEDS (default 24,32,40,42,62: the artifact's), BENCH_MULTITENANT_SIZES
 * (default 36,32,16), BENCH_MULTITENANT_PARTS (default faro,dilu,dilu-inference) and
 * BENCH_MULTITENANT_POLICIES (default: the six Faro rows) narrow a run; a run of some
 * parts writes bench/results/multitenant-<parts>.md instead. The oracle forecaster runs on seed 42
 * only (the authors' oracle column is seed 42).
 * Data is read from ../shared/data (MLFAAS_DATA_DIR); nothing of it is copied.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { RESULTS_DIR } from './lib/results';
import { runFaroComparison } from './multitenant/faro';
import { runDiluComparison } from './multitenant/dilu';
import { runDiluInference } from './multitenant/dilu-inference';
import { OURS_POLICIES } from './multitenant/ours-policy';
import { oursVsFaroTable } from './multitenant/ours-table';

const list = (v: string | undefined, def: string) => (v ?? def).split(',').map((s) => s.trim()).filter((s) => s !== '');
const SEEDS = list(process.env.BENCH_MULTITENANT_SEEDS, '24,32,40,42,62').map(Number);
const SIZES = list(process.env.BENCH_MULTITENANT_SIZES, '36,32,16').map(Number);
const PARTS = new Set(list(process.env.BENCH_MULTITENANT_PARTS, 'faro,dilu,dilu-inference'));
const POLICIES = list(process.env.BENCH_MULTITENANT_POLICIES, '');
const log = (s: string) => process.stderr.write(`[bench:multitenant] ${s}\n`);
const f3 = (x: number) => (Number.isFinite(x) ? x.toFixed(3) : String(x));

async function main(): Promise<void> {
  const t0 = Date.now();
  const out: string[] = [
    '# Benchmark results: multitenant',
    '',
    `Written by \`npm run bench:multitenant\` on ${new Date().toISOString()}; seeds ${SEEDS.join(', ')}; sizes ${SIZES.join(', ')}.`,
    'Our numbers are measured in this run; the authors\' are the issue\'s (their artifacts, run outside the repo).',
  ];
  let faroFidelity = NaN;
  let vsFaroBest = NaN;
  if (PARTS.has('faro')) {
    const policies = POLICIES.length > 0 ? POLICIES : undefined;
    const faro = await runFaroComparison({ seeds: SEEDS, sizes: SIZES, policies, extra: OURS_POLICIES, oracleSeeds: [42], log });
    faroFidelity = faro.fidelityMaxError;
    // b: ours on the platform's least-outstanding router ÷ best Faro stored (bench/multitenant/ours-table.ts)
    const ours = oursVsFaroTable(faro.rows, SIZES);
    vsFaroBest = ours.vsFaroBest;
    out.push('', '## Faro: the authors\' simulator setup, our port and ours', '', faro.markdown, '',
      `Fidelity (our port, seed 42, vs the authors' seed-42 rerun, worst over rows): ${f3(faro.fidelityMaxError)}; ` +
      `our 5-seed mean vs the same rerun: ${f3(faro.fidelityMeanMaxError)}. ${faro.runs} simulator runs.`,
      '', ...ours.lines);
  }
  let diluFidelity = NaN;
  let gpusVsDilu = NaN;
  if (PARTS.has('dilu')) {
    log('dilu scheduling simulator');
    const d = await runDiluComparison({});
    diluFidelity = d.fidelityMaxError;
    gpusVsDilu = d.gpusVsDilu;
    out.push('', '## Dilu: the authors\' scheduling simulator inputs, our port and ours', '', d.markdown, '',
      `Fidelity (Dilu port vs authors, peak and time-average, worst): ${f3(d.fidelityMaxError)}; baselines ${f3(d.baselineMaxError)}. ` +
      `Ours ÷ Dilu port on the report counts: peak ${f3(d.gpusVsDilu)}, time-average ${f3(d.gpusVsDiluAvg)}; extra failures ${d.extraFailures}.`);
  }
  if (PARTS.has('dilu-inference')) {
    log('dilu in the inference simulator');
    const di = await runDiluInference({});
    out.push('', '## Dilu in our inference simulator', '', di.markdown);
  }
  const line = `multitenant: faro_fidelity_max_error=${f3(faroFidelity)} lost_utility_vs_faro_best=${f3(vsFaroBest)} ` +
    `dilu_fidelity_max_error=${f3(diluFidelity)} gpus_vs_dilu=${f3(gpusVsDilu)} seeds=${SEEDS.length}`;
  out.push('', `Wall time ${((Date.now() - t0) / 1000).toFixed(0)} s.`, '', line, '');
  const all = ['faro', 'dilu', 'dilu-inference'].every((p) => PARTS.has(p));
  writeFileSync(join(RESULTS_DIR, all ? 'multitenant.md' : `multitenant-${[...PARTS].join('-')}.md`), out.join('\n'));
  console.log(line);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
