/**
 * Command-line options of the multitenant tools (ours-tune, ours-eval, ours-debug, ...): `--name value`
 * pairs, comma lists, and the simulator options the tuning tools share (router, CPU model, node size).
 */
import type { FaroSimConfig } from '../../autoscaler/sim/faro/config';

/** The value after `--name`, else `def`. */
export function arg(name: string, def: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : def;
}

/** A comma list of numbers. */
export const nums = (s: string): number[] => s.split(',').map(Number);

/** `--days` (default 1,4,8), refusing day 11: the evaluation day is never tuned on. */
export function tuningDays(): number[] {
  const days = nums(arg('days', '1,4,8'));
  if (days.includes(11)) throw new Error('day 11 is the evaluation day: never tune on it');
  return days;
}

export interface SimArgs {
  readonly router: NonNullable<FaroSimConfig['router']>;
  readonly cpu: NonNullable<FaroSimConfig['cpu']>;
  readonly nodeUnits?: number;
}

/** `--router roundRobin|leastOutstanding`, `--cpu quota|shares`, `--node-units N`, checked. */
export function simArgs(defaultRouter: SimArgs['router']): SimArgs {
  const router = arg('router', defaultRouter) as SimArgs['router'];
  if (router !== 'roundRobin' && router !== 'leastOutstanding') throw new Error(`--router: roundRobin or leastOutstanding, not ${router}`);
  const cpu = arg('cpu', 'quota') as SimArgs['cpu'];
  if (cpu !== 'quota' && cpu !== 'shares') throw new Error(`--cpu: quota or shares, not ${cpu}`);
  const nodeUnits = arg('node-units', '') === '' ? undefined : Number(arg('node-units', ''));
  if (nodeUnits !== undefined && !(nodeUnits > 0)) throw new Error(`--node-units: a positive number, not ${arg('node-units', '')}`);
  return { router, cpu, nodeUnits };
}
