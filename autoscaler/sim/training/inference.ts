/**
 * Inference demand for the training simulator's inference VC, derived at run time from a
 * per-minute request trace in `../shared/data/traces/` (never copied into the repo): the Azure
 * Functions 2019 sample (10 functions × 14 days, invocations per minute), summed over functions,
 * days concatenated. The inference VC is sized for the series' peak (FaPES' N_r^max).
 */
import { readFileSync } from 'node:fs';
import { serversFromLoad } from '../../training/fapes/manager';

export const DEFAULT_INFERENCE_TRACE = '/work/shared/data/traces/azure_functions_2019/azure2019_faro10fn_d01-d14_per_minute.csv';

/** Total invocations per minute over all functions, day after day (minute 0 = day 1 00:00). */
export function loadAzureFunctionsLoad(path = DEFAULT_INFERENCE_TRACE): number[] {
  const lines = readFileSync(path, 'utf8').trim().split(/\r?\n/);
  const byDay = new Map<number, number[]>();
  for (const line of lines.slice(1)) {
    const cells = line.split(',');
    const day = Number(cells[1]);
    const row = byDay.get(day) ?? new Array(cells.length - 2).fill(0);
    for (let m = 2; m < cells.length; m++) row[m - 2] += Number(cells[m]) || 0;
    byDay.set(day, row);
  }
  return [...byDay.keys()].sort((a, b) => a - b).flatMap((d) => byDay.get(d)!);
}

/**
 * Servers needed at time t (s) for a VC of `servers` servers: the per-minute series scaled to the
 * VC's size at its peak, started at `origin` (s) and repeated when the simulation outlasts it.
 */
export function demandFromLoad(load: readonly number[], servers: number, origin: number): (t: number) => number {
  const need = serversFromLoad(load, servers);
  return (t) => need[((Math.floor((t - origin) / 60) % need.length) + need.length) % need.length];
}
