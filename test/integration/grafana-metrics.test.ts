import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  DASHBOARD_DIR, dashboardFiles, expressions, labelNames, legendLabels, loadDashboard, metricNames, type QueryDashboard, resultLabels,
} from '../../deploy/grafana/schema/queries';
import { GatewayMetrics } from '../../gateway/metrics/gateway-metrics';
import { aFunction } from '../helpers/fixtures';
import { hostCanEnforceCfs } from '../helpers/host-enforcement';
import { seedImage } from '../helpers/images';
import { eventually, testGateway, testRedis, TestPlatform } from '../helpers/platform';

/**
 * Issue 26: every metric and label the Grafana dashboards query, held against what a running gateway
 * really serves on /metrics (real redis, a real function with real replicas, real invocations):
 * each metric a panel reads is exported, and has series, unless deploy/grafana/README.md lists it
 * among the series that appear only when a thing exists (training jobs, GPU replicas, …); each label a
 * matcher or a grouping names is one the metric's series carry.
 */

/** What one scrape holds: the exported names (histograms and summaries with their suffixes) and each sampled name's label names. */
interface Scrape { exported: Set<string>; series: Map<string, Set<string>> }

/** Reads Prometheus' text exposition format. */
function parseScrape(text: string): Scrape {
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
function documentedConditional(readme: string): Set<string> {
  const section = /### Series that appear only when a thing exists\n([\s\S]*?)(?:\n#|$)/.exec(readme)?.[1] ?? '';
  const rows = section.split('\n').filter((l) => l.startsWith('| `'));
  return new Set(rows.flatMap((r) => [...r.split('|')[1].matchAll(/`([\w:]+)`/g)].map((m) => m[1])));
}

/**
 * The label names each metric of the gateway's registry is declared with (a fresh GatewayMetrics, the
 * registry the gateway builds), histograms' `_bucket` with `le`: the labels of a metric the scrape has no
 * series of.
 */
function declaredLabels(): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  const registry = new GatewayMetrics().registry;
  for (const { name, type } of registry.getMetricsAsArray() as unknown as Array<{ name: string; type: string; labelNames?: string[] }>) {
    const labels = registry.getSingleMetric(name) as unknown as { labelNames?: string[] };
    out.set(name, new Set(labels.labelNames ?? []));
    if (String(type) === 'histogram') out.set(`${name}_bucket`, new Set([...(labels.labelNames ?? []), 'le']));
  }
  return out;
}

/** The labels Prometheus itself sets on every series it scrapes (the target's). */
const TARGET_LABELS = ['job', 'instance'];

/**
 * Each query of `d` that reads a metric the scrape does not export, one without series not documented
 * as conditional, a label none of its metrics carries (the scrape's series, else their declaration) nor
 * the target, or whose legend names a label its result series lack.
 */
function metricFaults(d: QueryDashboard, scrape: Scrape, conditional: Set<string>, declared: Map<string, Set<string>>): string[] {
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
function targetLabelClashes(scrape: Scrape, declared: Map<string, Set<string>>, readme: string): string[] {
  if (/^\s*honor_labels:\s*true\s*$/m.test(readme)) return [];
  const names = new Set([...scrape.series.keys(), ...declared.keys()]);
  return [...names].sort().flatMap((n) => TARGET_LABELS.filter((l) => (scrape.series.get(n) ?? declared.get(n))?.has(l)).map((l) => `${n}: ${l}`));
}

// answers with the batch size and queue time asked for in the query (as ml-inference replicas set them)
const BATCH_SERVER = `
const http = require('http');
http.createServer((req, res) => {
  if (req.url === '/_/ready' || req.url === '/_/health') { res.writeHead(200); return res.end('ok'); }
  const u = new URL(req.url, 'http://x');
  req.resume();
  req.on('end', () => {
    const h = { 'content-type': 'text/plain', 'X-Batch-Size': '2', 'X-Queue-Ms': '1' };
    res.writeHead(Number(u.searchParams.get('status') || 200), h);
    res.end('ok');
  });
}).listen(Number(process.env.PORT), process.env.HOST || '127.0.0.1');
`;

describe('Grafana dashboards against a running gateway\'s /metrics (issue 26)', () => {
  let redis: Awaited<ReturnType<typeof testRedis>>;
  let p: TestPlatform;
  let scrape: Scrape;
  const declared = declaredLabels();
  const readme = readFileSync(join(DASHBOARD_DIR, 'README.md'), 'utf8');
  const conditional = documentedConditional(readme);
  // where the host gives replicas a cgroup, their CPU and memory series must be there
  if (hostCanEnforceCfs()) for (const n of ['pod_cpu_usage_seconds_total', 'pod_memory_working_set_bytes']) conditional.delete(n);

  beforeAll(async () => {
    redis = await testRedis();
    p = await testGateway(redis.url);
    seedImage(p.images, 'test/grafana-echo:1', { 'server.js': BATCH_SERVER }, {
      language: 'node', kind: 'inference', mode: 'http', fprocess: 'node server.js', readiness: '/_/ready', health: '/_/health',
    });
    const res = await p.json('POST', '/system/functions', aFunction('graf').image('test/grafana-echo:1').minScale(1).build());
    expect(res.status).toBe(202);
    const ready = await eventually(async () =>
      (await p.gw.provider.endpoints({ name: 'graf', namespace: 'openfaas-fn' })).some((r) => r.state === 'ready'), 30000);
    expect(ready).toBe(true);
    for (let i = 0; i < 3; i++) expect((await p.get('/function/graf')).status).toBe(200);
    expect((await p.get('/function/graf?status=400')).status).toBe(400);
    // the router's view (ready count, in flight) follows the function from its first request on
    const seen = await eventually(async () => {
      scrape = parseScrape(await (await p.get('/metrics')).text());
      return scrape.series.has('gateway_service_ready_count') && scrape.series.has('nv_inference_count');
    }, 20000, 200);
    expect(seen).toBe(true);
  }, 120000);
  afterAll(async () => {
    await p?.stop();
    await redis?.stop();
  });

  it('the README documents some series as conditional, each one the gateway exports', () => {
    expect(conditional.size).toBeGreaterThan(0);
    expect([...conditional].filter((n) => !scrape.exported.has(n))).toEqual([]);
  });

  it('the README\'s scrape config keeps the gateway\'s own job label (training jobs) from being renamed exported_job', () => {
    expect(targetLabelClashes(scrape, declared, readme)).toEqual([]);
    const without = readme.replace(/^\s*honor_labels:.*\n/m, '');
    expect(targetLabelClashes(scrape, declared, without)).toEqual(['mlfaas_training_job_progress: job', 'mlfaas_training_job_workers: job']);
  });

  it.each(dashboardFiles())('%s queries only exported metrics, with series or documented as conditional, by labels they carry', (f) => {
    expect(metricFaults(loadDashboard(f), scrape, conditional, declared)).toEqual([]);
  });

  it('reports a misspelt metric, an undocumented metric without series and a label the metric lacks (failing cases)', () => {
    const d = loadDashboard('functions-overview.json');
    const bad = JSON.parse(JSON.stringify(d)) as QueryDashboard;
    const [p1, p2, p3, p4] = bad.panels;
    p1.targets = [{ expr: 'count(gateway_service_counts)' }];
    p2.targets = [{ expr: 'sum(mlfaas_training_job_workers)' }];
    p3.targets = [{ expr: 'sum by (pod) (gateway_service_count)' }]; // a label of a metric with series
    p4.targets = [{ expr: 'max by (function_name) (mlfaas_training_job_progress)' }]; // of one without: its label is `function`
    const p5 = bad.panels[4];
    p5.targets = [{ expr: 'sum(gateway_service_count)', legendFormat: '{{function_name}}' }]; // summed away
    const faults = [
      `${d.uid} panel ${p1.id} "${p1.title}": gateway_service_counts is not exported`,
      `${d.uid} panel ${p2.id} "${p2.title}": mlfaas_training_job_workers has no series and is not documented as conditional`,
      `${d.uid} panel ${p3.id} "${p3.title}": label pod is on no series of gateway_service_count`,
      `${d.uid} panel ${p4.id} "${p4.title}": mlfaas_training_job_progress has no series and is not documented as conditional`,
      `${d.uid} panel ${p4.id} "${p4.title}": label function_name is on no series of mlfaas_training_job_progress`,
      `${d.uid} panel ${p5.id} "${p5.title}": legend {{function_name}} names a label the result series lack`,
    ];
    const undocumented = new Set([...conditional].filter((n) => !n.startsWith('mlfaas_training_job_')));
    expect(metricFaults(bad, scrape, undocumented, declared)).toEqual(faults);
    expect(metricFaults(bad, scrape, conditional, declared)).toEqual(faults.filter((f) => !f.includes('has no series')));
  });
});
