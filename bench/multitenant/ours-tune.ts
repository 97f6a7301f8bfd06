/**
 * Tuning on the history days only (never day 11, the evaluation day):
 *   tsx bench/multitenant/ours-tune.ts --days 1,4,8 --sizes 36,32,16 --seeds 1 --params '{"overloadAt":1.3}'
 *     [--router roundRobin|leastOutstanding] [--policy mlfaas|Faro-FairSum|Faro-Sum] [--cpu quota|shares] [--node-units N]
 * prints, per size, the mean lost utility / SLO violation rate / drop rate over days × seeds.
 * --policy Faro-FairSum / Faro-Sum runs that Faro variant (naive forecaster, the artifact's accept-rate
 * timing) on the same days, for the router decomposition.
 */
import type { FaroSimConfig } from '../../autoscaler/sim/faro/config';
import { faroPolicy } from './faro-policies';
import { registerPredictivePolicies } from './faro-predictive';
import { runOne, type RunSpec } from './ours-lib';

function arg(name: string, def: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : def;
}
const nums = (s: string): number[] => s.split(',').map(Number);
const days = nums(arg('days', '1,4,8'));
if (days.includes(11)) throw new Error('day 11 is the evaluation day: never tune on it');
const sizes = nums(arg('sizes', '36,32,16'));
const seeds = nums(arg('seeds', '1'));
const params = JSON.parse(arg('params', '{}'));
const router = arg('router', 'roundRobin') as NonNullable<FaroSimConfig['router']>;
if (router !== 'roundRobin' && router !== 'leastOutstanding') throw new Error(`--router: roundRobin or leastOutstanding, not ${router}`);
const policy = arg('policy', 'mlfaas');
const cpu = arg('cpu', 'quota') as NonNullable<FaroSimConfig['cpu']>;
if (cpu !== 'quota' && cpu !== 'shares') throw new Error(`--cpu: quota or shares, not ${cpu}`);
const nodeUnits = arg('node-units', '') === '' ? undefined : Number(arg('node-units', ''));
if (nodeUnits !== undefined && !(nodeUnits > 0)) throw new Error(`--node-units: a positive number, not ${arg('node-units', '')}`);
registerPredictivePolicies();
/** The run's policy: ours (default) or a Faro variant as the Faro comparison starts it. */
function policySpec(seed: number): Partial<RunSpec> {
  if (policy === 'mlfaas') return { params };
  const def = faroPolicy(policy);
  return { make: (R) => def.make(R, seed, 'naive', 10), initialReplicas: def.initialReplicas(0, 10), acceptRateOnlyWithReplicaChange: true };
}
const out: Record<string, { lost: number; viol: number; drop: number }> = {};
for (const size of sizes) {
  let lost = 0;
  let viol = 0;
  let drop = 0;
  let k = 0;
  for (const day of days) {
    for (const seed of seeds) {
      const m = runOne({ size, seed, day, router, cpu, nodeUnits, ...policySpec(seed) });
      console.error(`size ${size} day ${day} seed ${seed}: lost ${m.lostUtility.toFixed(4)} viol ${m.sloViolationRate.toFixed(4)} (${m.wallS.toFixed(0)} s)`);
      lost += m.lostUtility;
      viol += m.sloViolationRate;
      drop += m.dropRate;
      k++;
    }
  }
  out[size] = { lost: +(lost / k).toFixed(4), viol: +(viol / k).toFixed(4), drop: +(drop / k).toFixed(4) };
}
console.log(JSON.stringify({ policy, router, cpu, nodeUnits, params, days, seeds, out }));
