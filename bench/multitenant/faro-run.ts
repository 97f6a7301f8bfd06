/**
 * One run of the Faro simulator port, printed as JSON:
 *   tsx bench/multitenant/faro-run.ts --policy AIAD --size 36 --seed 42 [--predictor naive|oracle]
 */
import { simulateFaro } from '../../autoscaler/sim/faro';
import { faroPolicy, FARO_POLICIES, type PredictorName } from './faro-policies';
import { registerPredictivePolicies } from './faro-predictive';

registerPredictivePolicies();

function arg(name: string, def?: string): string {
  const i = process.argv.indexOf(`--${name}`);
  if (i >= 0 && i + 1 < process.argv.length) return process.argv[i + 1];
  if (def === undefined) {
    console.error(`usage: faro-run --policy <${FARO_POLICIES.map((p) => p.name).join('|')}> --size R --seed S [--predictor naive|oracle]`);
    process.exit(2);
  }
  return def;
}

const policy = faroPolicy(arg('policy'));
const size = Number(arg('size', '36'));
const seed = Number(arg('seed', '42'));
const predictor = arg('predictor', 'naive') as PredictorName;
const jobs = 10;
const res = simulateFaro({
  controller: policy.make(size, seed, predictor, jobs),
  capacity: size,
  seed,
  initialReplicas: policy.initialReplicas(size, jobs),
});
const m = res.metrics;
console.log(JSON.stringify({
  policy: policy.name,
  size,
  seed,
  predictor: policy.predictive ? predictor : null,
  lostUtility: m.lostUtility,
  sloViolationRate: m.sloViolationRate,
  dropRate: m.dropRate,
  requests: m.requests,
  dropped: m.dropped,
  perJobUtility: m.perJobUtility,
  ticks: res.record.ticks,
  decisions: res.record.decisions,
  wallMs: res.wallMs,
}, null, 2));
