import type { FaroMetrics } from '../../autoscaler/sim/faro';
import type { FaroRow, SeedStats } from './faro';

const f3 = (x: number | undefined) => (x === undefined ? '—' : x.toFixed(3));
const pct = (x: number | undefined, d = 2) => (x === undefined ? '' : ` (${(100 * x).toFixed(d)} %)`);
const one = (m: FaroMetrics | undefined) => (m === undefined ? '—' : `${f3(m.lostUtility)}${pct(m.sloViolationRate)}`);
const errPct = (e: number | undefined) => (e === undefined ? '—' : `${(100 * e).toFixed(1)} %`);
const stats = (s: SeedStats | undefined) =>
  s === undefined ? '—' : `${f3(s.lostMean)} ± ${f3(s.lostCi)}${pct(s.violationMean)}`;

/** The markdown of the Faro comparison: ours beside the authors' figures, one row per size × policy. */
export function formatFaroTable(
  rows: readonly FaroRow[],
  o: { seeds: readonly number[]; oracleSeeds: readonly number[]; rerunSeed: number; fidelityMaxError: number; fidelityMeanMaxError: number },
): string {
  const lines: string[] = [];
  lines.push('### Faro comparison: lost cluster utility (cluster SLO violation rate), 10 jobs × 6 h');
  lines.push('');
  lines.push(`Ours = the TypeScript port of the artifact's simulator (autoscaler/sim/faro), seed ${o.rerunSeed} and the mean ± 95 % CI over seeds `
    + `${o.seeds.join(', ')} (naive forecaster for the predictive policies). Our simulator draws the artifact's random streams `
    + '(numpy default_rng arrivals, numpy legacy service and proxy times, CPython random for drops and replica order; '
    + 'autoscaler/sim/faro/numpy-random.ts): a seed number names the same Poisson realisation in both simulators, so "err seed '
    + `${o.rerunSeed}" compares the same run; its service times follow the artifact's draw order (tested on the first draws of a run). `
    + 'Authors = issue 24\'s table (their artifact; stored = 5 seeds with their N-HiTS; rerun = seed 42 with the naive / oracle stand-ins).');
  lines.push('');
  lines.push('Every row runs on the artifact\'s router (a shuffled round robin over the replicas below 4 assigned) except those named "on the '
    + 'platform\'s router" / "the platform\'s least-outstanding router", which run with the simulator\'s `router: \'leastOutstanding\'` '
    + '(the mlfaas gateway\'s rule, gateway/proxy/balancer.ts, same cap of 4).');
  lines.push('');
  lines.push(`| cluster | policy | ours seed ${o.rerunSeed} naive | ours seed ${o.rerunSeed} oracle | ours ${o.seeds.length} seeds (naive) `
    + `| ours ${o.oracleSeeds.length} seed${o.oracleSeeds.length > 1 ? 's' : ''} (oracle) `
    + `| authors stored | authors rerun naive | authors rerun oracle | err seed ${o.rerunSeed} | err seed mean `
    + '| rerun in our 95 % PI | err mean vs stored |');
  lines.push(`|${' --- |'.repeat(13)}`);
  for (const r of rows) {
    const n = r.ours.naive ?? r.ours.none;
    const a = r.authors;
    lines.push(`| ${r.size} | ${r.policy} | ${one(n?.rerunSeed)} | ${one(r.ours.oracle?.rerunSeed)} | ${stats(n?.seeds)} | ${stats(r.ours.oracle?.seeds)} `
      + `| ${a?.stored === undefined ? '—' : f3(a.stored) + pct(a.storedViolation)} `
      + `| ${a?.rerunNaive === undefined ? '—' : f3(a.rerunNaive) + pct(a.rerunNaiveViolation)} `
      + `| ${a?.rerunOracle === undefined ? '—' : f3(a.rerunOracle) + pct(a.rerunOracleViolation)} `
      + `| ${errPct(r.errorRerunSeed)} `
      + `| ${errPct(r.errorSeedMean)} | ${r.rerunInPrediction === undefined ? '—' : r.rerunInPrediction ? 'yes' : 'no'} | ${errPct(r.errorStored)} |`);
  }
  const withPi = rows.filter((r) => r.rerunInPrediction !== undefined);
  lines.push('');
  lines.push(`Authors' rerun inside the 95 % prediction interval of our seeds: ${withPi.filter((r) => r.rerunInPrediction).length} of ${withPi.length} rows.`);
  lines.push('');
  lines.push(`Fidelity (worst |ours − authors' rerun| / rerun over the rows with a rerun figure): seed ${o.rerunSeed} `
    + `${o.fidelityMaxError.toFixed(3)}, seed mean ${o.fidelityMeanMaxError.toFixed(3)}. "err mean vs stored": the policies without a `
    + 'forecaster, our seed mean against the artifact\'s stored 5-seed mean.');
  return lines.join('\n');
}
