// Quick probe (not part of the bench): hybrid SLO models side by side on every suite of the bench.
// npx tsx bench/inference/compare-slo-models.ts '[{"label":"mdc","params":{"sloModel":"mdc"}},{"label":"shared","params":{"sloModel":"shared"}}]'
import { join } from 'node:path';
import { readTrace } from '../../autoscaler/sim/traces';
import { runScenario, Scenario } from './run';
const DATA = '/work/shared/data';
const T = (f: string) => join(DATA, 'traces', f);
const variants: Array<{ label: string; params: Record<string, unknown> }> = JSON.parse(
  process.argv[2] ?? '[{"label":"mdc","params":{"sloModel":"mdc"}},{"label":"shared","params":{"sloModel":"shared"}}]');
const sc: Scenario[] = [];
for (const w of ['rps', 'stress'])
  for (const m of ['resnet50', 'convnext_tiny', 'mobilenet_v3_large', 'shufflenet_v2_x1_0', 'resnet152'])
    for (const slo of [1.5, 2, 2.5]) sc.push({ suite: 'has-gpu', workload: `${w}`, trace: readTrace(T(`hasgpu_workloads/${w}.json`)), models: [m], sloMult: slo,
      coldStartS: 20 });
for (const w of ['bursty', 'periodic', 'sporadic']) sc.push({ suite: 'dilu', workload: w, trace: readTrace(T(`dilu_workloads/${w}.txt`)), models: ['resnet152'],
  sloMult: 2, coldStartS: 20 });
sc.push({ suite: 'faro', workload: '10 jobs', trace: readTrace(T('faro_top9_twitter/faro_eval_10jobs_6h_per_minute.csv'), { maxDurationS: 3 * 3600 }),
  models: ['resnet34'], sloMult: 2, coldStartS: 20 });
sc.push({ suite: 'azure', workload: '10 fns', trace: readTrace(T('azure_functions_2019/azure2019_faro10fn_d01-d14_per_minute.csv'),
  { day: 1, maxDurationS: 3 * 3600 }), models: ['resnet50', 'mobilenet_v3_large', 'resnet18', 'densenet121', 'vgg16'], sloMult: 2, coldStartS: 20 });
const only = (process.argv[3] ?? '').split(',').filter(Boolean);
const agg = new Map<string, { v: number; n: number; c: number }>();
for (const s of sc) {
  if (only.length && !only.includes(s.suite)) continue;
  const rs = runScenario({ ...s, only: variants.map((v) => ({ label: v.label, policy: 'hybrid', params: v.params })) }, DATA);
  for (const r of rs) {
    const k = `${s.suite} ${s.workload}|${r.label}`;
    const a = agg.get(k) ?? { v: 0, n: 0, c: 0 };
    a.v += r.r.violations; a.n += r.r.requests; a.c += r.r.cost;
    agg.set(k, a);
  }
}
for (const [k, a] of agg) console.log(`${k.padEnd(30)} vio ${((100 * a.v) / Math.max(1, a.n)).toFixed(2)}%  cost ${a.c.toFixed(4)}`);
