import {
  expressions, labelNames, legendLabels, metricNames, type QueryDashboard, resultLabels,
} from './queries';

/**
 * Issue 26: checks of the dashboards' queries against what a gateway serves on /metrics (pure: the
 * scrape's text, the README's text and the declared labels are arguments).
 */

/** What one scrape holds: the exported names (histograms and summaries with their suffixes) and each sampled name's label names. */
export interface Scrape { exported: Set<string>; series: Map<string, Set<string>> }

/** Reads Prometheus' text exposition format. */
export function parseScrape(text: string): Scrape {
  const exported = new Set<string>();
  const series = new Map<string, Set<string>>();
  for (const line of text.split('\n')) {
    const type = /^# TYPE (\S+) (\w+)/.exec(line);
    if (type) {
      exported.add(type[1]);
      if (type[2] === 'histogram') for (const s of ['_bucket', '_sum', '_count']) exported.add(type[1] + s);
      if (type[2] === 'summary') for (const s of ['_sum', '_count']) exported.add(type[1] + s);
      continue;
    }
    const sample = /^([a-zA-Z_:][\w:]*)(\{.*\})?\s/.exec(line);
    if (!sample) continue;
    const labels = series.get(sample[1]) ?? new Set<string>();
    for (const m of (sample[2] ?? '').matchAll(/([a-zA-Z_]\w*)="(?:[^"\\]|\\.)*"/g)) labels.add(m[1]);
    series.set(sample[1], labels);
  }
  return { exported, series };
}

/** The metric names deploy/grafana/README.md lists under "Series that appear only when a thing exists". */
export function documentedConditional(readme: string): Set<string> {
  const section = /### Series that appear only when a thing exists\n([\s\S]*?)(?:\n#|$)/.exec(readme)?.[1] ?? '';
  const rows = section.split('\n').filter((l) => l.startsWith('| `'));
  return new Set(rows.flatMap((r) => [...r.split('|')[1].matchAll(/`([\w:]+)`/g)].map((m) => m[1])));
}

/** The labels Prometheus itself sets on every series it scrapes (the target's). */
export const TARGET_LABELS = ['job', 'instance'];

/**
 * Each query of `d` that reads a metric the scrape does not export, one without series not documented
 * as conditional, a label none of its metrics carries (the scrape's series, else their declaration) nor
 * the target, or whose legend names a label its result series lack.
 */
export function metricFaults(d: QueryDashboard, scrape: Scrape, conditional: Set<string>, declared: Map<string, Set<string>>): string[] {
  const faults: string[] = [];
  for (const { where, expr, legend } of expressions(d)) {
    const names = metricNames(expr);
    const carried = new Set<string>();
    for (const n of names) {
      if (!scrape.exported.has(n)) faults.push(`${where}: ${n} is not exported`);
      else if (!scrape.series.has(n) && !conditional.has(n)) faults.push(`${where}: ${n} has no series and is not documented as conditional`);
      for (const l of scrape.series.get(n) ?? declared.get(n) ?? []) carried.add(l);
      if (n.endsWith('_bucket')) carried.add('le');
    }
    for (const l of TARGET_LABELS) carried.add(l);
    for (const l of labelNames(expr)) if (!carried.has(l)) faults.push(`${where}: label ${l} is on no series of ${names.join(', ')}`);
    const result = new Set(resultLabels(expr) ?? carried);
    for (const l of legendLabels(legend ?? '')) if (!result.has(l)) faults.push(`${where}: legend {{${l}}} names a label the result series lack`);
  }
  return faults;
}

/**
 * Metrics that carry a label of their own named as a target label (job, instance): Prometheus renames
 * theirs to exported_<label> unless the scrape config in `readme` sets honor_labels: true.
 */
export function targetLabelClashes(scrape: Scrape, declared: Map<string, Set<string>>, readme: string): string[] {
  if (/^\s*honor_labels:\s*true\s*$/m.test(readme)) return [];
  const names = new Set([...scrape.series.keys(), ...declared.keys()]);
  return [...names].sort().flatMap((n) => TARGET_LABELS.filter((l) => (scrape.series.get(n) ?? declared.get(n))?.has(l)).map((l) => `${n}: ${l}`));
}

/** A Prometheus instant query's answer (`/api/v1/query`), as far as these checks read it. */
export interface PromAnswer { status: string; error?: string; data?: { result: Array<{ metric: Record<string, string> }> } }

/** Grafana's variables as the dashboards use them, given values: `$function`, `${function}`, `$__rate_interval`, `$__interval`. */
export function substitute(expr: string, vars: Record<string, string>): string {
  return expr.replace(/\$\{(\w+)\}|\$(\w+)/g, (whole, a: string | undefined, b: string | undefined) => vars[a ?? b ?? ''] ?? whole);
}

/**
 * Each query of `d` that a real Prometheus rejects, answers with no series although none of its metrics
 * is conditional, or answers with series lacking a label its legend names. `query` runs one expression.
 */
export async function prometheusFaults(d: QueryDashboard, vars: Record<string, string>, conditional: Set<string>,
  query: (expr: string) => Promise<PromAnswer>): Promise<string[]> {
  const faults: string[] = [];
  for (const { where, expr, legend } of expressions(d)) {
    if (where.includes(' variable ')) continue; // a variable's series: read with label_values, checked apart
    const a = await query(substitute(expr, vars));
    if (a.status !== 'success') {
      faults.push(`${where}: Prometheus rejects it: ${a.error ?? a.status}`);
      continue;
    }
    const result = a.data?.result ?? [];
    if (!result.length && !metricNames(expr).some((n) => conditional.has(n))) faults.push(`${where}: no data`);
    for (const l of legendLabels(legend ?? '')) {
      if (result.some((r) => !(l in r.metric))) faults.push(`${where}: legend {{${l}}} names a label the result series lack`);
    }
  }
  return faults;
}
