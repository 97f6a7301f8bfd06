/**
 * The reporting set's headline under each way the simulator may enforce a replica's configuration
 * (issue 22, item 6): quotas per SM row (HAS-GPU's FaST-GShare) or per device (tokend's one window
 * per GPU), a replica's batch as planned or the function's MAX_BATCH_SIZE (the runtime's dynamic
 * batching). Also how often a batch started while its device's busy replicas claimed more than one
 * window. `npx tsx bench/inference/mechanism.ts` (about 2-4 min per row on 2 cores) writes
 * bench/results/inference-mechanism.md; with row indices, prints those rows only (a JSON line each),
 * and `--report FILE...` writes the table from such lines (rows run in parallel).
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { simulate } from '../../autoscaler/sim/engine';
import type { SimOptions } from '../../autoscaler/sim/types';
import { headline, type SeedTotals } from './aggregate';
import { REPORT_POLICIES, REPORT_SEEDS, reportParts } from './report-set';
import { setUpCluster } from './run';
import { table } from '../lib/results';

type Mechanism = Pick<SimOptions, 'quotaScope' | 'replicaBatch'>;

export const MECHANISMS: Array<{ label: string; m: Mechanism }> = [
  { label: 'slot quotas, planned batch (before)', m: { quotaScope: 'slot', replicaBatch: 'planned' } },
  { label: 'slot quotas, function batch', m: { quotaScope: 'slot', replicaBatch: 'function' } },
  { label: 'device quotas, planned batch', m: { quotaScope: 'device', replicaBatch: 'planned' } },
  { label: 'device quotas, function batch (SM-share plans metered in plain device time: what MPS-less tokend would do to them; the live loop plans ' +
    's = 1 there)', m: { quotaScope: 'device', replicaBatch: 'function' } },
  { label: 'occupancy quotas, planned batch', m: { quotaScope: 'occupancy', replicaBatch: 'planned' } },
  { label: 'occupancy quotas, function batch (the platform with MPS)', m: { quotaScope: 'occupancy', replicaBatch: 'function' } },
];

export interface MechanismRow {
  label: string;
  violationVsStatic: number;
  costVsKpa: number;
  kpaViolation: number;
  /** Per policy: pooled violation rate, device cost (mean over seeds), share of batches on an oversubscribed device. */
  policies: Record<string, { violationRate: number; cost: number; oversubscribed: number; overCapacity: number }>;
}

export function runMechanism(dataDir: string, m: Mechanism, label: string, coldStartS = 20): MechanismRow {
  const parts = reportParts(dataDir);
  const acc: Record<string, { v: number; n: number; cost: number; b: number; o: number; c: number }> = Object.fromEntries(REPORT_POLICIES.map((p) => [p.label,
    { v: 0, n: 0, cost: 0, b: 0, o: 0, c: 0 }]));
  const perSeed = REPORT_SEEDS.map((seed) => {
    const { fns, capability, told, beta } = setUpCluster(parts, dataDir, { seed });
    const t: Record<string, { violations: number; requests: number; cost: number }> = {};
    for (const p of REPORT_POLICIES) {
      const r = simulate(fns, { policy: p.policy, params: p.params, capability, told, interferenceBeta: beta, coldStartS, seed, ...m });
      t[p.label] = { violations: r.violations, requests: r.requests, cost: r.deviceCost };
      const a = acc[p.label];
      a.v += r.violations;
      a.n += r.requests;
      a.cost += r.deviceCost / REPORT_SEEDS.length;
      a.b += r.batches;
      a.o += r.oversubscribedBatches;
      a.c += r.overCapacityBatches;
    }
    return t as SeedTotals;
  });
  const hl = headline(perSeed);
  const policies = Object.fromEntries(Object.entries(acc).map(([k, a]) => [k, { violationRate: a.v / Math.max(1, a.n), cost: a.cost,
    oversubscribed: a.o / Math.max(1, a.b), overCapacity: a.c / Math.max(1, a.b) }]));
  return { label, violationVsStatic: hl.violationVsStatic.mean, costVsKpa: hl.costVsKpa.mean, kpaViolation: hl.kpaViolation.mean, policies };
}

const pc = (x: number) => (100 * x).toFixed(2);

export function mechanismReport(rows: readonly MechanismRow[]): string {
  const head = table(
    ['simulated enforcement', 'violation_ratio_vs_static', 'cost_ratio_vs_kpa', 'kpa_violation_ratio'],
    rows.map((r) => [r.label, r.violationVsStatic.toFixed(2), r.costVsKpa.toFixed(2), r.kpaViolation.toFixed(2)]),
  );
  const labels = REPORT_POLICIES.map((p) => p.label);
  const per = table(
    ['simulated enforcement', ...labels.map((l) => `${l}: violations % / cost $ / Σq>1 % / Σs·q>1 %`)],
    rows.map((r) => [
      r.label,
      ...labels.map((l) => `${pc(r.policies[l].violationRate)} / ${r.policies[l].cost.toFixed(2)} / ${pc(r.policies[l].oversubscribed)} / ` +
        `${pc(r.policies[l].overCapacity)}`),
    ]),
  );
  return `# The inference headline under each simulated enforcement

Command: \`npx tsx bench/inference/mechanism.ts\` (issue 22, item 6). The reporting set of \`npm run bench:inference\` (same workloads, seeds, policies, ` +
  `interference and profile noise) with the time quota metered per SM row (HAS-GPU's FaST-GShare: replicas in different rows of a device each get their ` +
  `whole quota at once) or per device in one tokend window per GPU, either in plain device time (\`device\`: the platform without MPS, every replica ` +
  `time-slices the whole GPU; a batch runs at q / max(1, q + Σ quota of the device's other busy replicas)) or in SM-share-weighted units (\`occupancy\`: ` +
  `the platform on an MPS node; the limiter charges a replica started at SM share s device time × s, its tokend request = limit = q·s, and tokend scales ` +
  `grants down together only when the busy replicas' Σ s·q exceeds 1, so a batch runs at q · min(1, 1 / (s·q + Σ s·q of the device's other busy ` +
  `replicas)), HAS-GPU's occupancy measure); in both the scale is fixed when the batch starts. Each replica batches up to the batch its placement was ` +
  `planned with or up to the function's MAX_BATCH_SIZE (the platform's runtime). In every row an SM share is fixed for a replica's life: a decision sets ` +
  `quotas, adds and removes replicas, so a new share is a new replica and its cold start. The last row is what \`npm run bench:inference\` now runs ` +
  `(default enforced dimensions spatial+temporal: MPS present); with BENCH_ENFORCED=temporal (no MPS, every SM share 1) it runs the \`device\` scope, ` +
  `which then equals \`occupancy\`.

Headline ratios (mean over ${REPORT_SEEDS.length} seeds):

${head}

Per policy, pooled over seeds: violation rate, device cost (mean per seed), and the share of batches that started while the busy replicas of their device ` +
  `claimed more than one window, in device time (Σ quota > 1: those run slower under \`device\`) and in SM-share-weighted units (Σ s·q > 1: those run ` +
  `slower under \`occupancy\`):

${per}

Under \`occupancy\` no batch of any policy started over Σ s·q > 1: the policies plan per SM row (Σ quota ≤ 1 in a row, Σ share ≤ 1 over a device's rows: ` +
  `\`autoscaler/inference/cluster.ts\`), which keeps Σ s·q ≤ 1 per device, so tokend never scales their grants down and each \`occupancy\` row equals ` +
  `its \`slot\` row. Under \`device\` (no MPS, or tokend counting plain device time) the same plans oversubscribe the window (Σ q > 1 for 31 % of the ` +
  `hybrid's batches) and are throttled.
`;
}

if (require.main === module) {
  const data = process.env.MLFAAS_DATA_DIR ?? '/work/shared/data';
  const write = (rows: MechanismRow[]) => {
    const body = mechanismReport(rows);
    mkdirSync(join(__dirname, '..', 'results'), { recursive: true });
    writeFileSync(join(__dirname, '..', 'results', 'inference-mechanism.md'), body);
    console.log(body);
  };
  if (process.argv[2] === '--report') {
    // rows printed by runs of single rows (one JSON per line, in any order), as the table
    const rows = process.argv.slice(3).flatMap((f) => readFileSync(f, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as MechanismRow));
    const order = (r: MechanismRow) => MECHANISMS.findIndex((x) => x.label === r.label);
    write(rows.sort((a, b) => order(a) - order(b)));
  } else if (process.argv[2] !== undefined) {
    // the rows with these indices, one JSON line each
    for (const i of process.argv.slice(2)) {
      const { label, m } = MECHANISMS[Number(i)];
      console.log(JSON.stringify(runMechanism(data, m, label)));
    }
  } else {
    write(MECHANISMS.map(({ label, m }) => {
      const r = runMechanism(data, m, label);
      process.stderr.write(`${JSON.stringify(r)}\n`);
      return r;
    }));
  }
}
