/**
 * `mlfaas top`'s frame, pure: the `/system/overview` snapshot (contract.md §1) as a text table no
 * wider than `width`. Functions first (replicas ready/desired, rates, latency against the SLO,
 * queue), each replica's state, quota and SM share under its function; training jobs below.
 */
import type { Overview, OverviewFunction, OverviewJob } from '../gateway/routes/overview-model';

const num = (x: number | undefined, digits = 1): string => (x === undefined ? '-' : x.toFixed(digits));
const pct = (x: number | undefined): string => (x === undefined ? '-' : `${Math.round(x * 100)}%`);

/** `p99 vs SLO`: the measured quantile, the objective, and `!` when it is over. */
export function latencyCell(f: Pick<OverviewFunction, 'p50Ms' | 'p99Ms' | 'sloMs' | 'sloPercentile'>): string {
  const p = `${num(f.p50Ms)}/${num(f.p99Ms)}`;
  if (f.sloMs === undefined) return p;
  if (f.p99Ms === undefined) return `${p} slo ${f.sloMs}`;
  const over = f.p99Ms !== undefined && f.p99Ms > f.sloMs;
  return `${p} ${over ? '>' : '<='} ${f.sloMs}${f.sloPercentile !== undefined && f.sloPercentile !== 99 ? `@p${f.sloPercentile}` : ''}${over ? ' !' : ''}`;
}

/** Columns padded to the widest cell, each line cut at `width`. */
export function table(rows: string[][], width: number): string[] {
  const cols = Math.max(0, ...rows.map((r) => r.length));
  const w = Array.from({ length: cols }, (_, c) => Math.max(0, ...rows.map((r) => (r[c] ?? '').length)));
  return rows.map((r) => cut(r.map((cell, c) => (c === r.length - 1 ? cell : cell.padEnd(w[c]))).join('  '), width));
}

const cut = (line: string, width: number): string => (width > 0 && line.length > width ? line.slice(0, Math.max(width - 1, 0)) + '~' : line);

function functionRows(f: OverviewFunction): string[][] {
  const name = f.namespace === 'openfaas-fn' ? f.name : `${f.name}.${f.namespace}`;
  // z: may scale to zero (z90s: after 90 s idle, when the function declares it)
  const zero = f.scaleToZero ? ` z${f.idleToZero !== undefined ? `${f.idleToZero}s` : ''}` : '';
  const rows = [[
    name,
    f.kind,
    `${f.replicas.ready}/${f.replicas.desired}${zero}`,
    `${f.replicas.min}..${f.replicas.max}`,
    num(f.rps),
    num(f.errorsPerS),
    latencyCell(f),
    String(f.queueLength),
    String(f.inflight),
  ]];
  for (const r of f.replicaList) {
    const bits = [`quota ${pct(r.cpuQuota)}`];
    if (r.cpuLimit !== undefined) bits.push(`limit ${pct(r.cpuLimit)}`);
    if (r.smShare !== undefined) bits.push(`sm ${pct(r.smShare)}`);
    if (r.cpuset) bits.push(`cpus ${r.cpuset}`);
    if (r.gpu) bits.push(`gpu ${r.gpu}`);
    rows.push([`  ${r.id}`, r.state, bits.join(' ')]);
  }
  return rows;
}

function jobRow(j: OverviewJob): string[] {
  return [j.id, j.function, j.state, `${Math.round(j.progress * 100)}%`, String(j.workers), j.deadline ?? '-', j.goodput === undefined ? '-' : num(j.goodput)];
}

/** One frame of `mlfaas top`. */
export function render(o: Overview, width = 120): string {
  const lines = [cut(`mlfaas top  ${o.at}  functions ${o.functions.length}  jobs ${o.jobs.length}`, width), ''];
  if (o.functions.length === 0) lines.push('no functions deployed');
  else {
    // the replica rows have 3 cells: the table pads only the columns they share with functions
    const head = ['FUNCTION', 'KIND', 'READY', 'MIN..MAX', 'RPS', 'ERR/S', 'P50/P99 MS vs SLO', 'QUEUE', 'INFLIGHT'];
    lines.push(...table([head, ...o.functions.flatMap(functionRows)], width));
  }
  lines.push('');
  if (o.jobs.length === 0) lines.push('no training jobs');
  else lines.push(...table([['JOB', 'FUNCTION', 'STATE', 'PROGRESS', 'WORKERS', 'DEADLINE', 'GOODPUT'], ...o.jobs.map(jobRow)], width));
  return lines.join('\n') + '\n';
}
