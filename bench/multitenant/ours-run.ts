/** One run of the mlfaas controller in the Faro simulator: `tsx bench/multitenant/ours-run.ts --size 36 --seed 42 [--day 3|eval] [--params '{...}']`. */
import { runOne } from './ours-lib';
import { arg } from './cli-args';

const day = arg('day', 'eval');
const m = runOne({
  size: Number(arg('size', '36')),
  seed: Number(arg('seed', '42')),
  day: day === 'eval' ? 'eval' : Number(day),
  sample: Number(arg('sample', '0')),
  params: JSON.parse(arg('params', '{}')),
});
const { perJobUtility, record: _record, ...rest } = m;
console.log(JSON.stringify({ ...rest, perJobUtility: perJobUtility.map((u) => Math.round(u * 1000) / 1000) }));
