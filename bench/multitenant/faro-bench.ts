/**
 * The whole Faro comparison, printed as markdown:
 *   tsx bench/multitenant/faro-bench.ts [--seeds 24,32,40,42,62] [--oracle-seeds 42] [--sizes 36,32,16] [--policies AIAD,FairShare]
 */
import { runFaroComparison } from './faro';

function list(name: string, def: string): string[] {
  const i = process.argv.indexOf(`--${name}`);
  return (i >= 0 && i + 1 < process.argv.length ? process.argv[i + 1] : def).split(',').filter((s) => s !== '');
}

async function main(): Promise<void> {
  const policies = list('policies', '');
  const oracleSeeds = list('oracle-seeds', '').map(Number);
  const res = await runFaroComparison({
    seeds: list('seeds', '24,32,40,42,62').map(Number),
    sizes: list('sizes', '36,32,16').map(Number),
    policies: policies.length > 0 ? policies : undefined,
    predictors: list('predictors', 'naive,oracle') as Array<'naive' | 'oracle'>,
    oracleSeeds: oracleSeeds.length > 0 ? oracleSeeds : undefined,
    log: (l) => console.error(l),
  });
  console.log(res.markdown);
  console.log(`\nfaro: fidelity_max_error=${res.fidelityMaxError.toFixed(3)} fidelity_mean_max_error=${res.fidelityMeanMaxError.toFixed(3)} `
    + `rerun_in_pi=${res.rerunInPrediction.inside}/${res.rerunInPrediction.rows} runs=${res.runs} wall_s=${(res.wallMs / 1000).toFixed(0)}`);
}

void main();
