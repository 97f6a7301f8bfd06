import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Issue 26: the PromQL of the dashboards in deploy/grafana and the metric names it reads, for the tests
 * that hold them against Grafana's schema and against what a running gateway exports.
 */

/** The folder of the dashboard files. */
export const DASHBOARD_DIR = join(__dirname, '..');

/** A panel as far as these checks read it. */
export interface QueryPanel { id: number; type: string; title: string; targets?: Array<{ expr?: string; legendFormat?: string }> }

/** A dashboard as far as these checks read it. */
export interface QueryDashboard {
  uid: string;
  title: string;
  panels: QueryPanel[];
  templating: { list: Array<{ name?: string; type: string; query?: unknown }> };
}

/** The dashboard files (`*.json` in DASHBOARD_DIR), sorted. */
export function dashboardFiles(dir = DASHBOARD_DIR): string[] {
  return readdirSync(dir).filter((f) => f.endsWith('.json')).sort();
}

/** One dashboard file, parsed. */
export function loadDashboard(file: string, dir = DASHBOARD_DIR): QueryDashboard {
  return JSON.parse(readFileSync(join(dir, file), 'utf8')) as QueryDashboard;
}

const KEYWORDS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'bool', 'and', 'or', 'unless', 'offset', 'inf', 'nan']);

/** The metric names a PromQL expression reads: identifiers that are not functions, keywords, labels or Grafana variables. */
export function metricNames(expr: string): string[] {
  const s = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""') // string literals (label values, regexes)
    .replace(/\$\{[^}]*\}|\$\w+/g, ' ') // Grafana variables ($function, $__rate_interval, ${DS})
    .replace(/\{[^}]*\}/g, ' ') // label matchers
    .replace(/\[[^\]]*\]/g, ' ') // range and subquery selectors
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' '); // label lists
  const out = new Set<string>();
  for (const m of s.matchAll(/[a-zA-Z0-9_:.]+/g)) {
    if (/^[0-9.]/.test(m[0])) continue; // a number or a duration (0.99, 5m after offset)
    const rest = s.slice(m.index! + m[0].length);
    if (/^\s*\(/.test(rest) || KEYWORDS.has(m[0].toLowerCase())) continue; // a function call or a keyword
    out.add(m[0]);
  }
  return [...out];
}

/** Every expression of a dashboard, with where it is (and its legend): panel targets and query variables (the series of `label_values(series, label)`). */
export function expressions(d: QueryDashboard): Array<{ where: string; expr: string; legend?: string }> {
  const out: Array<{ where: string; expr: string; legend?: string }> = d.panels.flatMap((p) => (p.targets ?? [])
    .map((t) => ({ where: `${d.uid} panel ${p.id} "${p.title}"`, expr: t.expr ?? '', ...(t.legendFormat ? { legend: t.legendFormat } : {}) })));
  for (const v of d.templating.list) {
    if (v.type !== 'query') continue;
    const q = typeof v.query === 'string' ? v.query : (v.query as { query?: string } | undefined)?.query ?? '';
    const inner = /^label_values\((.*),\s*\w+\)$/.exec(q)?.[1] ?? q;
    out.push({ where: `${d.uid} variable ${v.name ?? ''}`.trimEnd(), expr: inner });
  }
  return out;
}

/** Each metric a dashboard reads, with every place that reads it. */
export function metricsRead(d: QueryDashboard): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const { where, expr } of expressions(d)) for (const n of metricNames(expr)) out.set(n, [...(out.get(n) ?? []), where]);
  return out;
}

/** The label names a PromQL expression reads: in label matchers and in by/without/on/ignoring/group_left/group_right lists. */
export function labelNames(expr: string): string[] {
  const s = expr.replace(/"(?:[^"\\]|\\.)*"/g, '""').replace(/\$\{[^}]*\}|\$\w+/g, ' ');
  const out = new Set<string>();
  for (const block of s.matchAll(/\{([^}]*)\}/g)) for (const m of block[1].matchAll(/([a-zA-Z_]\w*)\s*(?:=~|!~|!=|=)/g)) out.add(m[1]);
  for (const list of s.matchAll(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)/g)) {
    for (const l of list[1].split(',').map((x) => x.trim()).filter(Boolean)) out.add(l);
  }
  return [...out];
}

const AGGREGATIONS = /\b(?:sum|min|max|avg|count|group|stddev|stdvar|topk|bottomk|quantile|count_values)\s*(?:(?:by|without)\s*\([^)]*\)\s*)?\(/;

/**
 * The labels an expression's result series carry, where the expression says: the union of its `by`
 * lists (less `le`, which histogram_quantile consumes) when it aggregates, else undefined (the
 * series' own labels pass through).
 */
export function resultLabels(expr: string): string[] | undefined {
  const s = expr.replace(/"(?:[^"\\]|\\.)*"/g, '""');
  if (!AGGREGATIONS.test(s) || /\bwithout\s*\(/.test(s)) return undefined; // `without` is not modelled: taken as passing labels through
  const out = new Set<string>();
  for (const list of s.matchAll(/\bby\s*\(([^)]*)\)/g)) for (const l of list[1].split(',').map((x) => x.trim()).filter(Boolean)) out.add(l);
  out.delete('le');
  return [...out];
}

/** The labels a legend format names (`{{function_name}} {{code}}` → function_name, code). */
export function legendLabels(legend: string): string[] {
  return [...new Set([...legend.matchAll(/\{\{\s*(\w+)\s*\}\}/g)].map((m) => m[1]))];
}
