/**
 * `mlfaas sim training --trace FILE --cluster nXgY --slot S --gpu A100|T4 --policy NAME`
 * Prints the deadline-satisfactory ratio and JCT figures. Dispatched by `autoscaler/sim/cli.ts`
 * with the arguments after `sim training`.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { policyNames } from '../../training/registry';
import { DEFAULT_DATA_DIR, loadClusterSpec, loadThroughputs, loadTrace, parseClusterName, type GpuType } from './data';
import { buildSimJobs, jctStats, percentile, runPolicy } from './run';

const USAGE = `usage: mlfaas sim training --trace FILE --cluster nXgY [--slot S=60] [--gpu A100|T4] [--policy NAME=elasticflow] [--data-dir DIR]
policies: ${policyNames().join(', ')}`;

export function parseArgs(args: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (!a.startsWith('--')) throw new Error(`unexpected argument "${a}"`);
    const eq = a.indexOf('=');
    if (eq > 0) out[a.slice(2, eq)] = a.slice(eq + 1);
    else {
      if (i + 1 >= args.length) throw new Error(`${a} needs a value`);
      out[a.slice(2)] = args[++i];
    }
  }
  return out;
}

export async function main(args: string[]): Promise<number> {
  let opts: Record<string, string>;
  try {
    opts = parseArgs(args);
  } catch (e) {
    process.stderr.write(`${(e as Error).message}\n${USAGE}\n`);
    return 2;
  }
  if (opts.help !== undefined || !opts.trace || !opts.cluster) {
    process.stderr.write(`${USAGE}\n`);
    return opts.help !== undefined ? 0 : 2;
  }
  const dataDir = opts['data-dir'] ?? DEFAULT_DATA_DIR;
  const gpu = (opts.gpu ?? 'A100') as GpuType;
  if (gpu !== 'A100' && gpu !== 'T4') {
    process.stderr.write(`--gpu must be A100 or T4, got "${gpu}"\n`);
    return 2;
  }
  const slot = Number(opts.slot ?? 60);
  if (!(slot > 0)) {
    process.stderr.write(`--slot must be a positive number of seconds, got "${opts.slot}"\n`);
    return 2;
  }
  const policy = opts.policy ?? 'elasticflow';
  if (!policyNames().includes(policy)) {
    process.stderr.write(`unknown --policy "${policy}"\n${USAGE}\n`);
    return 2;
  }
  const specFile = join(dataDir, 'cluster_specs', `${opts.cluster}.csv`);
  const cluster = existsSync(specFile) ? loadClusterSpec(dataDir, opts.cluster) : parseClusterName(opts.cluster);
  const jobs = buildSimJobs(loadTrace(opts.trace), loadThroughputs(dataDir, gpu), gpu);
  const r = runPolicy({ jobs, cluster, slotSeconds: slot, policy });
  const s = jctStats(r);
  const out = [
    `trace=${opts.trace} cluster=${opts.cluster} (${cluster.nodes * cluster.gpusPerNode} ${gpu}) slot=${slot}s policy=${policy}`,
    `deadline_satisfactory_ratio=${r.ratio.toFixed(3)} accepted=${r.accepted} declined=${r.declined} jobs=${r.jobs.length}`,
    `finished=${s.finished} avg_jct_s=${s.avgJct.toFixed(0)} p95_jct_s=${s.p95Jct.toFixed(0)} avg_queueing_s=${s.avgQueueing.toFixed(0)} ` +
      `makespan_s=${r.makespan}`,
    `decision_ms p50=${percentile(r.decisionMs, 0.5).toFixed(2)} p90=${percentile(r.decisionMs, 0.9).toFixed(2)} rounds=${r.rounds}`,
  ];
  process.stdout.write(out.join('\n') + '\n');
  return 0;
}

if (require.main === module) {
  main(process.argv.slice(2)).then((c) => process.exit(c));
}
