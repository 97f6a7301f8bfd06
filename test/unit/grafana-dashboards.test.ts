import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Ajv from 'ajv';
import { GatewayMetrics } from '../../gateway/metrics/gateway-metrics';
import { expressions, labelNames, legendLabels, metricNames, resultLabels } from '../../deploy/grafana/schema/queries';

/**
 * Issue 26: deploy/grafana/*.json are Grafana dashboards (checked against a JSON schema of the
 * dashboard model written from Grafana's documentation) whose every PromQL expression names only
 * metrics the gateway exports (read from the registry the gateway builds, GatewayMetrics).
 * Stronger checks: test/unit/grafana-schema.test.ts (Grafana's own published types) and
 * test/integration/grafana-metrics.test.ts (a running gateway's /metrics).
 */

const DIR = join(__dirname, '../../deploy/grafana');
const schema = JSON.parse(readFileSync(join(DIR, 'schema/dashboard.schema.json'), 'utf8')) as object;
const validate = new Ajv({ allErrors: true }).compile(schema);

interface Panel { id: number; type: string; title: string; gridPos: { h: number; w: number; x: number; y: number }; targets: Array<{ expr: string }> }
interface Dashboard { uid: string; title: string; panels: Panel[]; templating: { list: Array<{ type: string; query?: unknown; definition?: string }> } }

const files = readdirSync(DIR).filter((f) => f.endsWith('.json')).sort();
const load = (f: string) => JSON.parse(readFileSync(join(DIR, f), 'utf8')) as Dashboard;

/** Every series name the registry exposes: histograms as _bucket/_sum/_count, summaries as _sum/_count too. */
async function exportedNames(): Promise<Set<string>> {
  const m = new GatewayMetrics();
  const names = new Set<string>();
  for (const metric of await m.registry.getMetricsAsJSON()) {
    names.add(metric.name);
    const type = String(metric.type);
    if (type === 'histogram') for (const s of ['_bucket', '_sum', '_count']) names.add(metric.name + s);
    if (type === 'summary') for (const s of ['_sum', '_count']) names.add(metric.name + s);
  }
  return names;
}

/** Expressions naming a metric the gateway does not export, as `where: name`. */
function unknownMetrics(d: Dashboard, known: Set<string>): string[] {
  return expressions(d).flatMap(({ where, expr }) => metricNames(expr).filter((n) => !known.has(n)).map((n) => `${where}: ${n}`));
}

/** Layout faults the schema cannot express: duplicate panel ids, panels past column 24 or overlapping. */
function layoutFaults(d: Dashboard): string[] {
  const faults: string[] = [];
  const ids = new Set<number>();
  d.panels.forEach((p, i) => {
    if (ids.has(p.id)) faults.push(`duplicate panel id ${p.id}`);
    ids.add(p.id);
    const g = p.gridPos;
    if (g.x + g.w > 24) faults.push(`panel ${p.id} ends past column 24`);
    for (const q of d.panels.slice(0, i)) {
      const h = q.gridPos;
      if (g.x < h.x + h.w && h.x < g.x + g.w && g.y < h.y + h.h && h.y < g.y + g.h) faults.push(`panels ${q.id} and ${p.id} overlap`);
    }
  });
  return faults;
}

describe('Grafana dashboards in deploy/grafana (issue 26)', () => {
  let known: Set<string>;
  beforeAll(async () => {
    known = await exportedNames();
  });

  it('there are the four dashboards, with distinct uids', () => {
    expect(files).toEqual(['function.json', 'functions-overview.json', 'nodes.json', 'training-jobs.json']);
    expect(new Set(files.map((f) => load(f).uid)).size).toBe(files.length);
  });

  it.each(files)('%s validates against the dashboard schema and lays its panels out without faults', (f) => {
    const d = load(f);
    expect(validate(d) ? [] : validate.errors).toEqual([]);
    expect(layoutFaults(d)).toEqual([]);
  });

  it.each(files)('%s names only metrics the gateway exports', (f) => {
    const d = load(f);
    expect(expressions(d).length).toBeGreaterThan(0);
    expect(unknownMetrics(d, known)).toEqual([]);
  });

  it('the one-function dashboard has a $function variable that its panels use', () => {
    const d = load('function.json');
    expect(d.templating.list.some((v) => (v as { name?: string }).name === 'function' && v.type === 'query')).toBe(true);
    expect(d.panels.every((p) => p.targets.every((t) => t.expr.includes('$function')))).toBe(true);
  });

  it('metricNames reads metric names only (not functions, labels, variables, durations)', () => {
    const e = 'histogram_quantile(0.99, sum by (function_name, le) '
      + '(rate(gateway_functions_seconds_bucket{function_name="$function",code=~"5.."}[$__rate_interval])))';
    expect(metricNames(e)).toEqual(['gateway_functions_seconds_bucket']);
    expect(metricNames('sum(rate(a_total[5m])) / sum(rate(b_total[1h] offset 5m)) > bool 0').sort()).toEqual(['a_total', 'b_total']);
    expect(metricNames('count by (state) (mlfaas_replica_cpu_quota)')).toEqual(['mlfaas_replica_cpu_quota']);
  });

  it('labelNames reads the labels of matchers and grouping lists, not variables or values', () => {
    const e = 'sum by (function_name, le) (rate(x_bucket{function_name="$function",code=~"5.."}[$__rate_interval])) / on(job) group_left() y';
    expect(labelNames(e).sort()).toEqual(['code', 'function_name', 'job', 'le']);
    expect(labelNames('count(gateway_service_count)')).toEqual([]);
    expect(labelNames('a{l="{x=1}"}')).toEqual(['l']);
  });

  it('resultLabels reads what an aggregation keeps (le consumed), and passes labels through where none aggregates', () => {
    expect(resultLabels('histogram_quantile(0.99, sum by (function_name, le) (rate(x_bucket[5m])))')).toEqual(['function_name']);
    expect(resultLabels('sum(rate(a_total[5m])) / sum(rate(b_total[5m]))')).toEqual([]);
    expect(resultLabels('max by (job, function) (g)')).toEqual(['job', 'function']);
    expect(resultLabels('rate(mlfaas_gateway_process_cpu_seconds_total[5m])')).toBeUndefined();
    expect(resultLabels('x{l="sum(y)"}')).toBeUndefined(); // a function name inside a label value is no aggregation
    expect(legendLabels('{{function_name}} timeout {{ phase }} {{function_name}}')).toEqual(['function_name', 'phase']);
  });

  it('fails a dashboard naming an unknown metric, and one with a bad panel (failing cases)', () => {
    const d = load('functions-overview.json');
    const bad: Dashboard = JSON.parse(JSON.stringify(d)) as Dashboard;
    bad.panels[0].targets[0].expr = 'sum(rate(gateway_function_invocations_total[5m]))'; // a typo of the real name
    expect(unknownMetrics(bad, known)).toEqual([`${d.uid} panel ${d.panels[0].id} "${d.panels[0].title}": gateway_function_invocations_total`]);
    const noGrid = JSON.parse(JSON.stringify(d)) as Record<string, unknown> & { panels: Array<Record<string, unknown>> };
    delete noGrid.panels[0].gridPos;
    noGrid.panels[1].type = 'graph'; // the old panel type, not one of the known ones
    expect(validate(noGrid)).toBe(false);
    expect(validate.errors!.map((e) => e.dataPath)).toEqual(expect.arrayContaining(['.panels[0]', '.panels[1].type']));
    const dup = JSON.parse(JSON.stringify(d)) as Dashboard;
    dup.panels[1].id = dup.panels[0].id;
    dup.panels[1].gridPos = { ...dup.panels[0].gridPos };
    expect(layoutFaults(dup)).toEqual([`duplicate panel id ${d.panels[0].id}`, `panels ${d.panels[0].id} and ${d.panels[0].id} overlap`]);
    const old = { ...d, schemaVersion: 27 };
    expect(validate(old)).toBe(false);
  });
});
