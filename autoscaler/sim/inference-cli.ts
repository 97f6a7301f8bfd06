import { parseArgs } from 'node:util';
import { policyNames } from '../inference/registry';
import { InterferenceAwareCapability } from '../inference/interference';
import { PolicyParams } from '../inference/types';
import { simulate } from './engine';
import { DEFAULT_DATA_DIR } from './latency-data';
import { buildFunctions } from './setup';
import { readTrace, traceDurationS } from './traces';

const USAGE = `mlfaas sim inference --trace FILE --policy NAME [options]

Replays a trace (any format of shared/data/traces) through an inference policy with a fake clock.
  --trace FILE          trace file (required)
  --policy NAME         ${policyNames().join(' | ')} (default hybrid)
  --param K=V           policy parameter, repeatable (e.g. --param lazy=true)
  --slo-ms N            latency SLO, ms (default: --slo-mult × the model's fastest latency)
  --slo-mult X          SLO as a multiple of batch-1 full-GPU latency (default 2)
  --percentile P        SLO percentile (default 99)
  --model NAME[,NAME]   RaPP V100 model(s) serving the series, round-robin (default resnet50)
  --max-batch N         max batch size (default 4)
  --min-scale N / --max-scale N   (defaults 1 / 64)
  --cold-start-s S      replica cold start (default 20)
  --timeout-s S         queued requests are dropped after S (default 30)
  --price P             $ per GPU-hour (default 2.48, V100 as HAS-GPU)
  --scale X             multiply the trace's counts
  --day N / --sample N  day (Azure 2019, Faro scaled file) / Faro sample
  --max-series N        keep the first N series
  --duration-s S        keep the first S seconds
  --seed N              arrivals seed (default 42)
  --interference B      co-located replicas slow each other by 1 + B·(busy neighbours' share);
                        policies plan with the worst case (default 0; Dilu's figure: 0.24)
  --profile-noise S     policies plan from a re-measured profile, each point × e^(S·N(0,1))
                        (default 0: they are told the ground truth; RaPP's labels: ~0.05)
  --data-dir DIR        shared data folder (default ${DEFAULT_DATA_DIR})
  --json                print the result as JSON`;

/** `mlfaas sim inference …`; returns the exit code. */
export async function main(args: string[]): Promise<number> {
  let values: Record<string, string | string[] | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args,
      options: {
        trace: { type: 'string' }, policy: { type: 'string' }, param: { type: 'string', multiple: true },
        'slo-ms': { type: 'string' }, 'slo-mult': { type: 'string' }, percentile: { type: 'string' }, model: { type: 'string' },
        'max-batch': { type: 'string' }, 'min-scale': { type: 'string' }, 'max-scale': { type: 'string' },
        'cold-start-s': { type: 'string' }, 'timeout-s': { type: 'string' }, price: { type: 'string' }, scale: { type: 'string' },
        day: { type: 'string' }, sample: { type: 'string' }, 'max-series': { type: 'string' }, 'duration-s': { type: 'string' },
        seed: { type: 'string' }, interference: { type: 'string' }, 'profile-noise': { type: 'string' }, 'data-dir': { type: 'string' },
        json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (e) {
    console.error(`${(e as Error).message}\n\n${USAGE}`);
    return 2;
  }
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  if (!values.trace) {
    console.error(`--trace is required\n\n${USAGE}`);
    return 2;
  }
  const num = (k: string) => (values[k] === undefined ? undefined : Number(values[k]));
  for (const k of ['slo-ms', 'slo-mult', 'percentile', 'max-batch', 'min-scale', 'max-scale', 'cold-start-s', 'timeout-s', 'price', 'scale', 'day', 'sample',
    'max-series', 'duration-s', 'seed', 'interference', 'profile-noise']) {
    const v = num(k);
    if (v !== undefined && !Number.isFinite(v)) {
      console.error(`--${k} must be a number, got "${values[k]}"`);
      return 2;
    }
  }
  const params: PolicyParams = {};
  for (const kv of (values.param as string[] | undefined) ?? []) {
    const i = kv.indexOf('=');
    if (i <= 0) {
      console.error(`--param wants K=V, got "${kv}"`);
      return 2;
    }
    params[kv.slice(0, i)] = kv.slice(i + 1);
  }
  const policy = String(values.policy ?? 'hybrid');
  try {
    const trace = readTrace(String(values.trace), { scale: num('scale'), day: num('day'), sample: num('sample'), maxSeries: num('max-series'),
      maxDurationS: num('duration-s') });
    const beta = num('interference') ?? 0;
    const sigma = num('profile-noise') ?? 0;
    if (beta < 0 || sigma < 0) {
      console.error(`--${beta < 0 ? 'interference' : 'profile-noise'} must be ≥ 0`);
      return 2;
    }
    const { fns, capability, told } = buildFunctions(trace, {
      dataDir: String(values['data-dir'] ?? DEFAULT_DATA_DIR),
      models: String(values.model ?? 'resnet50').split(','),
      sloMs: num('slo-ms'), sloMult: num('slo-mult'), sloPercentile: num('percentile'),
      maxBatchSize: num('max-batch'), minScale: num('min-scale'), maxScale: num('max-scale'),
      profileError: sigma > 0 ? { sigma, seed: num('seed') ?? 42 } : undefined,
    });
    const planned = beta > 0 ? new InterferenceAwareCapability(told, beta) : told;
    const r = simulate(fns, { policy, params, capability, told: planned, interferenceBeta: beta, coldStartS: num('cold-start-s'), timeoutS: num('timeout-s'),
      pricePerGpuHour: num('price'), seed: num('seed') });
    if (values.json) {
      console.log(JSON.stringify(r, null, 2));
      return 0;
    }
    const f2 = (x: number) => (Number.isFinite(x) ? x.toFixed(1) : String(x));
    console.log(`trace ${trace.name}: ${trace.series.length} function(s), ${traceDurationS(trace)} s, ${r.requests} requests; policy ${policy}; SLO ` +
      `${fns.map((f) => f.spec.sloLatencyMs).join('/')} ms (p${fns[0].spec.sloPercentile})`);
    console.log(`violation rate: ${(100 * r.violationRate).toFixed(2)} % (${r.violations} of ${r.requests})`);
    console.log(`latency p50/p95/p99: ${f2(r.p50)} / ${f2(r.p95)} / ${f2(r.p99)} ms`);
    console.log(`cold starts: ${r.coldStarts}`);
    console.log(`cost: $${r.deviceCost.toFixed(4)} (${r.deviceSeconds.toFixed(1)} device-seconds, whole devices held, at $${num('price') ?? 2.48}/h); ` +
      `share cost $${r.cost.toFixed(4)} (${r.gpuSeconds.toFixed(1)} GPU-seconds × SM share × quota)`);
    return 0;
  } catch (e) {
    console.error((e as Error).message);
    return 1;
  }
}
