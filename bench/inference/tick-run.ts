// npx tsx bench/inference/tick-run.ts [rounds] [distinct]; MLFAAS_TICK_PARAMS='{"sloModel":"shared"}' for other hybrid parameters
import { tickTimeMs } from './tick';
const r = tickTimeMs(process.env.MLFAAS_DATA_DIR ?? '/work/shared/data', 3200, Number(process.argv[2] ?? 6), process.argv[3] === 'distinct',
  JSON.parse(process.env.MLFAAS_TICK_PARAMS ?? '{}'));
console.log(JSON.stringify({ median: r.medianMs.toFixed(1), first: r.firstMs.toFixed(0), rounds: r.rounds.map((x) => x.toFixed(1)) }));
