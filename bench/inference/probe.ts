// Quick probe (not part of the bench): one policy on the HAS-GPU suite, per model and SLO.
import { join } from 'node:path';
import { simulate } from '../../autoscaler/sim/engine';
import { buildFunctions } from '../../autoscaler/sim/setup';
import { readTrace } from '../../autoscaler/sim/traces';
const DATA = '/work/shared/data';
const policies = (process.argv[2] ?? 'hybrid,kpa').split(',');
const params = process.argv[3] ? JSON.parse(process.argv[3]) : {};
const models = ['resnet50', 'convnext_tiny', 'mobilenet_v3_large', 'shufflenet_v2_x1_0', 'resnet152'];
const tot: Record<string, { v: number; n: number; c: number; cr: number }> = {};
for (const w of ['rps', 'stress'])
  for (const m of models)
    for (const slo of [1.5, 2, 2.5]) {
      const trace = readTrace(join(DATA, 'traces', `hasgpu_workloads/${w}.json`));
      const { fns, capability } = buildFunctions(trace, { dataDir: DATA, models: [m], sloMult: slo });
      const line: string[] = [];
      for (const pol of policies) {
        const r = simulate(fns, { policy: pol, params: params[pol] ?? {}, capability, coldStartS: 20, record: true });
        const t = (tot[pol] ??= { v: 0, n: 0, c: 0, cr: 0 });
        t.v += r.violations; t.n += r.requests; t.c += r.cost; if (w === 'rps') t.cr += r.cost;
        const sh = r.functions[0].series!.share;
        line.push(`${pol}: vio ${(100 * r.violationRate).toFixed(1)}% cost ${r.cost.toFixed(4)} meanShare ` +
          `${(sh.reduce((a, b) => a + b, 0) / sh.length).toFixed(3)} p99 ${r.p99.toFixed(0)}`);
      }
      console.log(`${w} ${m} ${slo}: ${line.join(' | ')}`);
    }
for (const [p, t] of Object.entries(tot)) console.log(`${p}: violations ${t.v}/${t.n} = ${(100 * t.v / t.n).toFixed(2)}%, cost ${t.c.toFixed(4)}, rps-cost ` +
  `${t.cr.toFixed(4)}`);
