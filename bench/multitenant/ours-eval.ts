/**
 * The report run: the mlfaas controller (defaults as tuned on days 1–10) and FairShare (a sanity
 * check of the same simulator) on the evaluation trace (day 11), seeds 24, 32, 40, 42, 62, at
 * 36 / 32 / 16 replicas' worth of CPU. Mean and 95 % CI (Student t, n − 1 dof) of lost utility,
 * SLO violation rate and drop rate, beside Faro's best (the authors' stored 5-seed means).
 *   tsx bench/multitenant/ours-eval.ts [--sizes 36,32,16] [--seeds 24,32,40,42,62] [--policies mlfaas,FairShare]
 * Policies: mlfaas (the artifact's round robin), mlfaas-lo (the platform's least-outstanding router, what b is
 * measured on), Faro-FairSum-lo / Faro-Sum-lo (naive forecaster on the platform's router; without -lo on the
 * artifact's round robin), FairShare.
 */
import { FairShare } from '../../autoscaler/reproductions/faro/baselines';
import { faroPolicy } from './faro-policies';
import { registerPredictivePolicies } from './faro-predictive';
import { runOne, type RunSpec } from './ours-lib';
import { arg, nums } from './cli-args';

/** Faro's best variant per size, the authors' stored 5-seed means (issue 24's table): lost utility, SLO violation rate. */
export const FARO_BEST: Record<number, { policy: string; lost: number; viol: number }> = {
  36: { policy: 'Faro-FairSum', lost: 0.368, viol: 0.0133 },
  32: { policy: 'Faro-FairSum', lost: 0.776, viol: 0.0314 },
  16: { policy: 'Faro-Sum', lost: 6.006, viol: 0.573 },
};

const T975: Record<number, number> = { 1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262 };

export function meanCi(xs: readonly number[]): { mean: number; ci: number } {
  const n = xs.length;
  const mean = xs.reduce((s, x) => s + x, 0) / n;
  if (n < 2) return { mean, ci: NaN };
  const sd = Math.sqrt(xs.reduce((s, x) => s + (x - mean) ** 2, 0) / (n - 1));
  return { mean, ci: ((T975[n - 1] ?? 1.96) * sd) / Math.sqrt(n) };
}

const fmt = (m: { mean: number; ci: number }, pct = false): string =>
  pct ? `${(m.mean * 100).toFixed(2)} ± ${(m.ci * 100).toFixed(2)} %` : `${m.mean.toFixed(3)} ± ${m.ci.toFixed(3)}`;

/** The run spec of a policy name of --policies. */
export function evalSpec(policy: string, seed: number): Partial<RunSpec> {
  if (policy === 'mlfaas') return {};
  if (policy === 'mlfaas-lo') return { router: 'leastOutstanding' };
  if (policy === 'FairShare') return { make: (R: number) => new FairShare(R, 10) };
  const m = /^(Faro-FairSum|Faro-Sum)(-lo)?$/.exec(policy);
  if (m === null) throw new Error(`--policies: unknown ${policy} (mlfaas, mlfaas-lo, Faro-FairSum[-lo], Faro-Sum[-lo], FairShare)`);
  registerPredictivePolicies();
  const def = faroPolicy(m[1]);
  const router = m[2] === '-lo' ? 'leastOutstanding' : 'roundRobin';
  return { router, make: (R: number) => def.make(R, seed, 'naive', 10), initialReplicas: 1, acceptRateOnlyWithReplicaChange: true };
}

function main(): void {
  const sizes = nums(arg('sizes', '36,32,16'));
  const seeds = nums(arg('seeds', '24,32,40,42,62'));
  const lines = [
    '| size | policy | lost utility | SLO violation | drop rate | ÷ Faro best (lost) | Faro best (authors, stored) |',
    '| --- | --- | --- | --- | --- | --- | --- |',
  ];
  const ratios: number[] = [];
  for (const size of sizes) {
    for (const policy of arg('policies', 'mlfaas,FairShare').split(',')) {
      const runs = seeds.map((seed) => {
        const r = runOne({ size, seed, day: 'eval', ...evalSpec(policy, seed) });
        console.error(`${size} ${policy} seed ${seed}: lost ${r.lostUtility.toFixed(4)} viol ${r.sloViolationRate.toFixed(4)} (${r.wallS.toFixed(0)} s)`);
        return r;
      });
      const lost = meanCi(runs.map((r) => r.lostUtility));
      const viol = meanCi(runs.map((r) => r.sloViolationRate));
      const drop = meanCi(runs.map((r) => r.dropRate));
      const best = FARO_BEST[size];
      const ratio = best ? lost.mean / best.lost : NaN;
      if (policy === (arg('b-policy', 'mlfaas-lo')) && best) ratios.push(ratio);
      lines.push(
        `| ${size} | ${policy} | ${fmt(lost)} | ${fmt(viol, true)} | ${fmt(drop, true)} | ${best ? ratio.toFixed(3) : '—'} | ` +
          `${best ? `${best.policy} ${best.lost} (${(best.viol * 100).toFixed(2)} %)` : '—'} |`,
      );
      console.error(`${size} ${policy}: ${runs.map((r) => r.lostUtility.toFixed(3)).join(' ')}`);
    }
  }
  console.log(lines.join('\n'));
  console.log(`\nours: lost_utility_vs_faro_best=${Math.max(...ratios).toFixed(3)} seeds=${seeds.length}`);
}

main();
