import { aFunction } from '../helpers/fixtures';
import { hostCanEnforceCfs } from '../helpers/host-enforcement';
import { seedImage } from '../helpers/images';
import { eventually, testGateway, testRedis, TestPlatform } from '../helpers/platform';

/**
 * Issue 26: the new /metrics series from a real gateway with real replicas: the answers' X-Batch-Size
 * and X-Queue-Ms reach the Triton-style counters through the invoker, ready counts and replica quotas
 * come from the router and the provider at scrape time.
 */

// answers with the batch size, queue time and status asked for in the query (as ml-inference replicas set them)
const BATCH_SERVER = `
const http = require('http');
http.createServer((req, res) => {
  if (req.url === '/_/ready' || req.url === '/_/health') { res.writeHead(200); return res.end('ok'); }
  const u = new URL(req.url, 'http://x');
  req.resume();
  req.on('end', () => {
    const h = { 'content-type': 'text/plain' };
    if (u.searchParams.get('batch')) h['X-Batch-Size'] = u.searchParams.get('batch');
    if (u.searchParams.get('queue')) h['X-Queue-Ms'] = u.searchParams.get('queue');
    res.writeHead(Number(u.searchParams.get('status') || 200), h);
    res.end('ok');
  });
}).listen(Number(process.env.PORT), process.env.HOST || '127.0.0.1');
`;

function value(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('gateway /metrics for the Grafana dashboards (real redis, real replicas)', () => {
  let redis: Awaited<ReturnType<typeof testRedis>>;
  let p: TestPlatform;
  const fn = 'function_name="batchy.openfaas-fn"';

  beforeAll(async () => {
    redis = await testRedis();
    p = await testGateway(redis.url);
    seedImage(p.images, 'test/batch-echo:1', { 'server.js': BATCH_SERVER }, {
      language: 'node', kind: 'inference', mode: 'http', fprocess: 'node server.js', readiness: '/_/ready', health: '/_/health',
    });
    const res = await p.json('POST', '/system/functions', aFunction('batchy').image('test/batch-echo:1').minScale(2).build());
    expect(res.status).toBe(202);
    const ready = await eventually(async () =>
      (await p.gw.provider.endpoints({ name: 'batchy', namespace: 'openfaas-fn' })).filter((r) => r.state === 'ready').length === 2, 30000);
    expect(ready).toBe(true);
    // the router follows a function from its first request on; its view catches up with the provider's
    expect((await p.get('/function/batchy')).status).toBe(200);
    expect(await eventually(() => [...p.gw.router.all()].some((s) => s.ref.name === 'batchy' && s.upstreams.length === 2), 20000)).toBe(true);
  }, 90000);
  afterAll(async () => {
    await p?.stop();
    await redis?.stop();
  });

  it('counts inferences, batch executions and queue time from the answers, success and failure by status', async () => {
    for (let i = 0; i < 4; i++) expect((await p.get('/function/batchy?batch=4&queue=1.5')).status).toBe(200);
    expect((await p.get('/function/batchy?batch=2&queue=0')).status).toBe(200);
    expect((await p.get('/function/batchy?status=400')).status).toBe(400);
    const text = await (await p.get('/metrics')).text();
    expect(value(text, `nv_inference_count{${fn}}`)).toBe(5);
    expect(value(text, `nv_inference_exec_count{${fn}}`)).toBeCloseTo(1.5, 9);
    expect(value(text, `nv_inference_queue_duration_us{${fn}}`)).toBe(6000);
    expect(value(text, `nv_inference_request_success{${fn}}`)).toBe(6); // the warm-up request in beforeAll too
    expect(value(text, `nv_inference_request_failure{${fn}}`)).toBe(1);
  });

  it('exports ready count, in flight and each replica\'s quota', async () => {
    const text = await (await p.get('/metrics')).text();
    expect(value(text, `gateway_service_ready_count{${fn}}`)).toBe(2);
    expect(value(text, `gateway_service_inflight{${fn}}`)).toBe(0);
    const eps = await p.gw.provider.endpoints({ name: 'batchy', namespace: 'openfaas-fn' });
    for (const r of eps) expect(value(text, `mlfaas_replica_cpu_quota{${fn},replica="${r.id}",state="${r.state}"}`)).toBe(r.quota);
  });

  it('exports each replica\'s CPU time and memory working set from its cgroup where the host gives replicas one', async () => {
    const text = await (await p.get('/metrics')).text();
    const eps = await p.gw.provider.endpoints({ name: 'batchy', namespace: 'openfaas-fn' });
    // replicas get cgroups only inside the sandbox on a host with writable cgroups (test/helpers/host-enforcement.ts)
    if (!hostCanEnforceCfs()) {
      expect(text).not.toContain('pod_cpu_usage_seconds_total{');
      return;
    }
    for (const r of eps) {
      expect(value(text, `pod_cpu_usage_seconds_total{${fn},pod="${r.id}"}`)).toBeGreaterThan(0); // node started, so it used some CPU
      expect(value(text, `pod_memory_working_set_bytes{${fn},pod="${r.id}"}`)).toBeGreaterThan(1 << 20); // a node process holds MBs
    }
  });
});
