/**
 * The "Ours vs the best Faro variant" section of bench:multitenant (issue 24, target b), decomposed by
 * router: ours on the artifact's round robin, ours on the platform's least-outstanding router (what b
 * is), and Faro-FairSum / Faro-Sum on the platform's router, beside the best Faro variant's stored
 * 5-seed mean. Pure: rows of the Faro comparison in, markdown lines and b out.
 */
import type { FaroRow } from './faro';
import { FARO_BEST_STORED, authorsFigure } from './faro-authors';
import { NODE_UNITS, ON_PLATFORM_ROUTER, OURS_LO_NAME, OURS_PLATFORM_NAME, OURS_RR_NAME } from './ours-policy';

const f3 = (x: number) => (Number.isFinite(x) ? x.toFixed(3) : String(x));

export interface OursVsFaro {
  readonly lines: string[];
  /** b: worst over sizes of ours as the platform runs it ÷ the best Faro variant's stored mean (NaN without rows). */
  readonly vsFaroBest: number;
  /** Worst over sizes of ours as the platform runs it ÷ the better of Faro-FairSum / Faro-Sum on the same router. */
  readonly vsFaroSameRouter: number;
}

export function oursVsFaroTable(rows: readonly FaroRow[], sizes: readonly number[]): OursVsFaro {
  const stat = (size: number, policy: string) => rows.find((r) => r.size === size && r.policy === policy)?.ours.none?.seeds;
  const body: string[] = [];
  let b = NaN;
  let same = NaN;
  const sameParts: string[] = [];
  for (const size of sizes) {
    const best = FARO_BEST_STORED[size];
    if (best === undefined) continue;
    const bestName = ['Faro-FairSum', 'Faro-Sum'].find((p) => authorsFigure(size, p)?.stored === best) ?? 'Faro';
    const bestViolation = authorsFigure(size, bestName)?.storedViolation;
    const faroLo = ['Faro-FairSum', 'Faro-Sum']
      .map((p) => ({ p, s: stat(size, `${p}${ON_PLATFORM_ROUTER}`) }))
      .filter((x) => x.s !== undefined)
      .sort((x, y) => x.s!.lostMean - y.s!.lostMean)[0];
    for (const name of [OURS_RR_NAME, OURS_LO_NAME, OURS_PLATFORM_NAME, `Faro-FairSum${ON_PLATFORM_ROUTER}`, `Faro-Sum${ON_PLATFORM_ROUTER}`]) {
      const s = stat(size, name);
      if (s === undefined) continue;
      const ratio = s.lostMean / best;
      const vsSame = faroLo === undefined ? NaN : s.lostMean / faroLo.s!.lostMean;
      if (name === OURS_PLATFORM_NAME) {
        b = Number.isNaN(b) ? ratio : Math.max(b, ratio);
        if (faroLo !== undefined) {
          same = Number.isNaN(same) ? vsSame : Math.max(same, vsSame);
          sameParts.push(`${size}: ${f3(vsSame)} (${faroLo.p} ${f3(faroLo.s!.lostMean)})`);
        }
      }
      body.push(`| ${size} | ${name} | ${f3(s.lostMean)} ± ${f3(s.lostCi)} | ${(100 * s.violationMean).toFixed(2)} % ± ${(100 * s.violationCi).toFixed(2)} | ` +
        `${bestName} ${f3(best)} (${bestViolation === undefined ? '—' : `${(100 * bestViolation).toFixed(2)} %`}) | ${f3(ratio)} | ${f3(vsSame)} |`);
    }
  }
  const lines = [
    '### Ours vs the best Faro variant (authors\' stored 5-seed mean), by router and CPU model', '',
    'b (the last line\'s lost_utility_vs_faro_best) is mlfaas as the platform runs it ÷ the best Faro variant\'s stored mean: its gateway\'s ' +
      'least-outstanding router (gateway/proxy/balancer.ts; the simulator\'s `router: \'leastOutstanding\'`) and the live runner\'s lending ' +
      '(a replica\'s quota is its request, cgroup cpu.shares, and one CPU its limit, so a busy replica borrows what idle ones leave; the ' +
      `simulator's \`cpu: 'shares'\`, lent only within nodes of ${NODE_UNITS} CPUs). The other rows decompose it: ours on the artifact's round robin ` +
      'and on the platform\'s router with hard quotas (the artifact\'s CPU model), and Faro on the platform\'s router. Faro\'s replicas run ' +
      'at quota 1, where lending changes nothing, run for run (test/unit/sim-faro/cpu-shares.test.ts).',
    `Against the best Faro variant on the same router (our port, naive forecaster, same seeds): ${sameParts.length > 0 ? sameParts.join('; ') : '—'}.`,
    '',
    '| replicas | row | lost utility (mean ± 95 % CI) | SLO violations | best Faro (stored) | ÷ best Faro stored | ÷ best Faro on the platform\'s router |',
    '| --- | --- | --- | --- | --- | --- | --- |',
    ...body,
  ];
  return { lines, vsFaroBest: b, vsFaroSameRouter: same };
}
