// Quick probe (not part of the bench): the headline ratios of the HAS-GPU suite over Poisson seeds.
// npx tsx bench/inference/seeds.ts [hybrid params JSON]
import { join } from 'node:path';
import { simulate } from '../../autoscaler/sim/engine';
import { buildFunctions } from '../../autoscaler/sim/setup';
import { readTrace } from '../../autoscaler/sim/traces';
const DATA = process.env.MLFAAS_DATA_DIR ?? '/work/shared/data';
const models = ['resnet50', 'convnext_tiny', 'mobilenet_v3_large', 'shufflenet_v2_x1_0', 'resnet152'];
const params = JSON.parse(process.argv[2] ?? '{}');
for (const seed of [42, 1, 2, 3, 4, 5]) {
  const t: Record<string, { v: number; c: number }> = { hybrid: { v: 0, c: 0 }, kpa: { v: 0, c: 0 } };
  const ratios: number[] = [];
  for (const w of ['rps', 'stress'])
    for (const m of models)
      for (const slo of [1.5, 2, 2.5]) {
        const trace = readTrace(join(DATA, 'traces', `hasgpu_workloads/${w}.json`));
        const { fns, capability } = buildFunctions(trace, { dataDir: DATA, models: [m], sloMult: slo });
        const h = simulate(fns, { policy: 'hybrid', params, capability, coldStartS: 20, seed });
        const k = simulate(fns, { policy: 'kpa', params: { maxReplicas: 2 }, capability, coldStartS: 20, seed });
        t.hybrid.v += h.violations; t.kpa.v += k.violations;
        if (w === 'rps') { t.hybrid.c += h.cost; t.kpa.c += k.cost; ratios.push(k.cost / h.cost); }
      }
  const mean = ratios.reduce((a, b) => a + b, 0) / ratios.length;
  const geo = Math.exp(ratios.reduce((a, b) => a + Math.log(b), 0) / ratios.length);
  console.log(`seed ${seed}: y=${(t.kpa.c / t.hybrid.c).toFixed(2)} z=${(t.kpa.v / t.hybrid.v).toFixed(2)} meanRatio=${mean.toFixed(2)} ` +
    `geoRatio=${geo.toFixed(2)}`);
}
