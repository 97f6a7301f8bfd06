import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  documentedConditional, metricFaults, type PromAnswer, prometheusFaults, parseScrape, type Scrape, targetLabelClashes,
} from '../../deploy/grafana/schema/checks';
import { DASHBOARD_DIR, dashboardFiles, loadDashboard, type QueryDashboard } from '../../deploy/grafana/schema/queries';
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

/** Debian's Prometheus (`apt-get install prometheus`; setup installs it when missing, as root). */
const PROMETHEUS = '/usr/bin/prometheus';

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

  it('no series carries a label Prometheus sets at scrape (job, instance), so the README\'s scrape config needs no honor_labels', () => {
    expect(readme).not.toMatch(/^\s*honor_labels:/m);
    expect(targetLabelClashes(scrape, declared, readme)).toEqual([]);
    // failing case: a gauge labelled `job` (as the training gauges were) is reported unless honor_labels is set
    const clash = new Map([...declared, ['mlfaas_training_job_progress', new Set(['job', 'function'])]]);
    expect(targetLabelClashes(scrape, clash, readme)).toEqual(['mlfaas_training_job_progress: job']);
    expect(targetLabelClashes(scrape, clash, `${readme}\n       honor_labels: true\n`)).toEqual([]);
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

  // A real Prometheus (Debian's) scraping this gateway with the README's scrape config, running every
  // dashboard query as Grafana would send it, its variables filled in.
  (existsSync(PROMETHEUS) ? describe : describe.skip)(`every query run by a real Prometheus (${PROMETHEUS})`, () => {
    let prom: { url: string; stop(): Promise<void> };
    const vars = { function: 'graf.openfaas-fn', __rate_interval: '1m', __interval: '5s' };
    const query = async (expr: string) =>
      (await (await fetch(`${prom.url}/api/v1/query?query=${encodeURIComponent(expr)}`)).json()) as PromAnswer;

    beforeAll(async () => {
      prom = await startPrometheus(readme, new URL(p.gw.url).host);
      // four scrapes in the last minute: rate() over 1m has points; a few more invocations to rate
      const scraped = await eventually(async () => {
        await p.get('/function/graf');
        const a = await query('count_over_time(up{job="mlfaas-gateway"}[1m]) >= 4 and up{job="mlfaas-gateway"} == 1');
        return (a.data?.result.length ?? 0) > 0;
      }, 60000, 500);
      expect(scraped).toBe(true);
    }, 120000);
    afterAll(async () => {
      await prom?.stop();
    });

    it.each(dashboardFiles())('%s: Prometheus parses every query and answers each with data (or its metric is conditional)', async (f) => {
      expect(await prometheusFaults(loadDashboard(f), vars, conditional, query)).toEqual([]);
    });

    it('the $function variable (label_values of gateway_service_count) lists the deployed function', async () => {
      const r = (await (await fetch(`${prom.url}/api/v1/label/function_name/values?match[]=gateway_service_count`)).json()) as { data: string[] };
      expect(r.data).toContain('graf.openfaas-fn');
    });

    it('reports a query Prometheus rejects, one without data and a legend label the result lacks (failing cases)', async () => {
      const d = loadDashboard('nodes.json');
      const bad = JSON.parse(JSON.stringify(d)) as QueryDashboard;
      const [p1, p2, p3] = bad.panels;
      p1.targets = [{ expr: 'sum(rate(gateway_function_invocation_total[$__rate_interval])' }];
      p2.targets = [{ expr: 'sum(gateway_service_counts)' }];
      p3.targets = [{ expr: 'sum by (function_name) (gateway_service_count)', legendFormat: '{{code}}' }];
      bad.panels = [p1, p2, p3];
      const faults = await prometheusFaults(bad, vars, conditional, query);
      expect(faults).toEqual([
        expect.stringMatching(new RegExp(`^${d.uid} panel ${p1.id} "${p1.title}": Prometheus rejects it: .*parse error`)),
        `${d.uid} panel ${p2.id} "${p2.title}": no data`,
        `${d.uid} panel ${p3.id} "${p3.title}": legend {{code}} names a label the result series lack`,
      ]);
    });
  });
});

/**
 * Starts Prometheus scraping `target` (host:port) with the scrape config of deploy/grafana/README.md, its
 * interval cut to 1 s, on a free port; stop() ends it (the child this started) and removes its data.
 */
async function startPrometheus(readme: string, target: string): Promise<{ url: string; stop(): Promise<void> }> {
  const block = /```yaml\n([\s\S]*?)```/.exec(readme)?.[1] ?? '';
  const indent = /^ */.exec(block)![0].length;
  const documented = block.split('\n').map((l) => l.slice(indent)).join('\n');
  const config = documented.replace("'127.0.0.1:8080'", `'${target}'`).replace('scrape_interval: 5s', 'scrape_interval: 1s');
  expect(config).toContain(target); // the README's config still has the target and interval this substitutes
  expect(config).toContain('scrape_interval: 1s');
  const dir = mkdtempSync(join(tmpdir(), 'mlfaas-prom-'));
  writeFileSync(join(dir, 'prometheus.yml'), config);
  const port = await new Promise<number>((resolve) => {
    const srv = createServer().listen(0, '127.0.0.1', () => {
      const { port: free } = srv.address() as AddressInfo;
      srv.close(() => resolve(free));
    });
  });
  const child = spawn(PROMETHEUS, [`--config.file=${join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${join(dir, 'data')}`,
    `--web.listen-address=127.0.0.1:${port}`, '--log.level=warn'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  child.stderr.on('data', (b: Buffer) => (log = (log + b.toString()).slice(-4000)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    child.kill('SIGTERM');
    const done = await Promise.race([exited.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 10000))]);
    if (!done) child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  };
  const url = `http://127.0.0.1:${port}`;
  const ready = await eventually(async () => (await fetch(`${url}/-/ready`).catch(() => undefined))?.status === 200, 30000, 200);
  if (!ready) {
    await stop();
    throw new Error(`Prometheus did not get ready on ${url}: ${log}`);
  }
  return { url, stop };
}
