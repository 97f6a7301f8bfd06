/**
 * Tuning on the history days only (never day 11, the evaluation day):
 *   tsx bench/multitenant/ours-tune.ts --days 1,4,8 --sizes 36,32,16 --seeds 1 --params '{"overloadAt":1.3}'
 *     [--router roundRobin|leastOutstanding] [--policy mlfaas|Faro-FairSum|Faro-Sum] [--cpu quota|shares] [--node-units N]
 * prints, per size, the mean lost utility / SLO violation rate / drop rate over days × seeds.
 * --policy Faro-FairSum / Faro-Sum runs that Faro variant (naive forecaster, the artifact's accept-rate
 * timing) on the same days, for the router decomposition.
 */
import { arg, nums, simArgs, tuningDays } from './cli-args';
import { faroPolicy } from './faro-policies';
import { registerPredictivePolicies } from './faro-predictive';
import { runOne, type RunSpec } from './ours-lib';

const days = tuningDays();
const sizes = nums(arg('sizes', '36,32,16'));
const seeds = nums(arg('seeds', '1'));
const params = JSON.parse(arg('params', '{}'));
const { router, cpu, nodeUnits } = simArgs('roundRobin');
const policy = arg('policy', 'mlfaas');
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
