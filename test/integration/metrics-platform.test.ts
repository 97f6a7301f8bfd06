import { GatewayMetrics } from '../../gateway/metrics/gateway-metrics';
import type { FunctionRouter } from '../../gateway/proxy/router';
import { Admission } from '../../gateway/proxy/admission';
import type { Redis } from 'ioredis';

/** Issue 26: the metrics the Grafana dashboards need, read from a real GatewayMetrics registry. */

interface FakeState { label: string; ref: { name: string; namespace: string }; upstreams: unknown[]; inflight: number; desired: number; queued: number }

function setup(states: FakeState[]) {
  const m = new GatewayMetrics();
  m.attach({ all: () => states } as unknown as FunctionRouter);
  return m;
}

const fn = (name: string, ready: number, inflight: number): FakeState => ({
  label: `${name}.fn`,
  ref: { name, namespace: 'fn' },
  upstreams: Array.from({ length: ready }, (_, i) => ({ id: `r${i}` })),
  inflight,
  desired: ready,
  queued: 0,
});

/** The value of one series in the text exposition, or undefined when absent. */
function value(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('platform metrics (issue 26)', () => {
  it('exports gateway_service_ready_count and gateway_service_inflight per function from the router', async () => {
    const m = setup([fn('a', 2, 3), fn('b', 0, 0)]);
    const text = await m.registry.metrics();
    expect(value(text, 'gateway_service_ready_count{function_name="a.fn"}')).toBe(2);
    expect(value(text, 'gateway_service_ready_count{function_name="b.fn"}')).toBe(0);
    expect(value(text, 'gateway_service_inflight{function_name="a.fn"}')).toBe(3);
  });

  it('counts Triton-style inference counters from X-Batch-Size and X-Queue-Ms; exec_count sums 1/batch', async () => {
    const m = setup([fn('a', 1, 0)]);
    // one batch of 4 (four answers with X-Batch-Size 4) and one batch of 1: 5 inferences, 2 executions
    for (let i = 0; i < 4; i++) m.inference.answered('a.fn', 200, { 'x-batch-size': '4', 'x-queue-ms': '2.5' });
    m.inference.answered('a.fn', 200, { 'x-batch-size': '1', 'x-queue-ms': '0' });
    m.inference.answered('a.fn', 500, {});
    const text = await m.registry.metrics();
    expect(value(text, 'nv_inference_count{function_name="a.fn"}')).toBe(5);
    expect(value(text, 'nv_inference_exec_count{function_name="a.fn"}')).toBeCloseTo(2, 9);
    expect(value(text, 'nv_inference_queue_duration_us{function_name="a.fn"}')).toBe(10000);
    expect(value(text, 'nv_inference_request_success{function_name="a.fn"}')).toBe(5);
    expect(value(text, 'nv_inference_request_failure{function_name="a.fn"}')).toBe(1);
  });

  it('ignores malformed batch headers (no NaN, no negative counts)', async () => {
    const m = setup([fn('a', 1, 0)]);
    m.inference.answered('a.fn', 200, { 'x-batch-size': 'abc', 'x-queue-ms': '-3' });
    m.inference.answered('a.fn', 200, { 'x-batch-size': '0' });
    m.inference.answered('a.fn', 200, { 'x-batch-size': '2', 'x-queue-ms': 'nope' });
    const text = await m.registry.metrics();
    expect(text).not.toMatch(/NaN/);
    expect(value(text, 'nv_inference_count{function_name="a.fn"}')).toBe(1);
    expect(value(text, 'nv_inference_exec_count{function_name="a.fn"}')).toBeCloseTo(0.5, 9);
    expect(value(text, 'nv_inference_queue_duration_us{function_name="a.fn"}')).toBeUndefined();
    expect(value(text, 'nv_inference_request_success{function_name="a.fn"}')).toBe(3);
  });

  it('drops a deleted function\'s inference series at the next scrape', async () => {
    const states = [fn('a', 1, 0)];
    const m = setup(states);
    m.inference.answered('a.fn', 200, { 'x-batch-size': '1' });
    expect(await m.registry.metrics()).toContain('nv_inference_count{function_name="a.fn"}');
    states.length = 0;
    expect(await m.registry.metrics()).not.toContain('function_name="a.fn"');
  });

  it('exports each replica\'s quota and SM share from the provider, and unfinished jobs\' progress and workers', async () => {
    const m = setup([fn('a', 2, 0)]);
    m.attachSources({
      replicas: async () => [{ id: 'r0', state: 'ready', quota: 0.5, smShare: 0.25 }, { id: 'r1', state: 'ready', quota: 1 }],
      jobs: async () => [
        { id: 'j1', function: 'train', namespace: 'fn', state: 'running', workers: 2, iterations: 200, progress: { step: 50 } },
        { id: 'j2', function: 'train', namespace: 'fn', state: 'completed', workers: 0, iterations: 10, progress: { step: 10 } },
      ],
    });
    const text = await m.registry.metrics();
    expect(value(text, 'mlfaas_replica_cpu_quota{function_name="a.fn",replica="r0",state="ready"}')).toBe(0.5);
    expect(value(text, 'mlfaas_replica_cpu_quota{function_name="a.fn",replica="r1",state="ready"}')).toBe(1);
    expect(value(text, 'mlfaas_replica_sm_share{function_name="a.fn",replica="r0"}')).toBe(0.25);
    expect(text).not.toContain('mlfaas_replica_sm_share{function_name="a.fn",replica="r1"}');
    expect(value(text, 'mlfaas_training_job_progress{job_id="j1",function="train.fn"}')).toBe(0.25);
    expect(value(text, 'mlfaas_training_job_workers{job_id="j1",function="train.fn"}')).toBe(2);
    expect(text).not.toContain('job="j2"');
  });

  it('a failing source leaves its gauges empty instead of failing the scrape', async () => {
    const m = setup([fn('a', 1, 0)]);
    m.attachSources({ replicas: () => Promise.reject(new Error('redis down')), jobs: () => Promise.reject(new Error('redis down')) });
    const text = await m.registry.metrics();
    expect(value(text, 'gateway_service_ready_count{function_name="a.fn"}')).toBe(1);
    expect(text).not.toContain('mlfaas_replica_cpu_quota{');
    expect(text).not.toContain('mlfaas_training_job_progress{');
  });

  it('exports each routed function\'s accept rate from the admission table', async () => {
    const m = setup([fn('a', 1, 0), fn('b', 1, 0)]);
    expect(await m.registry.metrics()).not.toContain('mlfaas_function_accept_rate{');
    m.attachSources({ acceptRate: (f) => (f === 'a.fn' ? 0.4 : 1) });
    const text = await m.registry.metrics();
    expect(value(text, 'mlfaas_function_accept_rate{function_name="a.fn"}')).toBe(0.4);
    expect(value(text, 'mlfaas_function_accept_rate{function_name="b.fn"}')).toBe(1);
  });

  it('Admission.rateOf: the stored rate until it expires, else 1', async () => {
    let now = 1_000;
    const table = { 'a.fn': JSON.stringify({ rate: 0.25, retryAfterS: 2, reason: 'full', untilMs: 5_000 }), 'b.fn': 'not json' };
    const adm = new Admission({ hgetall: async () => table } as unknown as Redis, 500, () => now);
    await adm.refresh();
    expect([adm.rateOf('a.fn'), adm.rateOf('b.fn'), adm.rateOf('c.fn')]).toEqual([0.25, 1, 1]);
    now = 6_000; // expired, not yet re-read
    expect(adm.rateOf('a.fn')).toBe(1);
  });

  it('counts admission answers by result', async () => {
    const m = setup([]);
    m.admissions.inc({ function_name: 'train.fn', result: 'admitted' });
    m.admissions.inc({ function_name: 'train.fn', result: 'refused' });
    m.admissions.inc({ function_name: 'train.fn', result: 'refused' });
    const text = await m.registry.metrics();
    expect(value(text, 'mlfaas_training_admissions_total{function_name="train.fn",result="refused"}')).toBe(2);
  });
});
