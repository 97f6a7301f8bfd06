/**
 * `/metrics` forgets a deleted function (issue 21, item 13): its invocation series go once the
 * router no longer routes it; other functions' stay. A real router and metrics registry over a
 * provider stand-in that answers `get`, `endpoints` and `watch` (all the router asks).
 */
import type { Change, ChangeListener } from '../../gateway/registry/change-feed';
import { GatewayMetrics } from '../../gateway/metrics/gateway-metrics';
import type { FunctionProvider, FunctionStatus } from '../../gateway/providers/function-provider';
import { FunctionRouter } from '../../gateway/proxy/router';
import { FunctionRef, refKey } from '../../gateway/lib/names';

const status = (name: string): FunctionStatus =>
  ({ name, namespace: 'openfaas-fn', image: 'i:1', labels: {}, annotations: {}, replicas: 1, availableReplicas: 1, createdAt: new Date(0).toISOString(),
    kind: 'inference' });

function providerOf(deployed: Map<string, FunctionStatus>) {
  const listeners: ChangeListener[] = [];
  const provider = {
    get: async (r: FunctionRef) => deployed.get(refKey(r)),
    endpoints: async () => [],
    watch: async (l: ChangeListener) => {
      listeners.push(l);
      return () => undefined;
    },
  } as unknown as FunctionProvider;
  return { provider, publish: (c: Change) => listeners.forEach((l) => l(c)) };
}

const series = (text: string, fn: string) => text.split('\n').filter((l) => l.startsWith('gateway_function') && l.includes(`function_name="${fn}"`));

test('a deleted function\'s invocation series leave /metrics; the others stay', async () => {
  const deployed = new Map(['a', 'b'].map((n) => [`openfaas-fn/${n}`, status(n)]));
  const { provider, publish } = providerOf(deployed);
  const router = new FunctionRouter(provider, { queueDepth: 10, replicaConcurrency: 1, refreshMs: 60_000 });
  await router.start();
  const metrics = new GatewayMetrics();
  metrics.attach(router);
  for (const n of ['a', 'b']) {
    await router.state({ name: n, namespace: 'openfaas-fn' });
    metrics.record(`${n}.openfaas-fn`, 200, 0.01);
    metrics.record(`${n}.openfaas-fn`, 500, 0.02);
  }
  let text = await metrics.registry.metrics();
  expect(series(text, 'a.openfaas-fn').length).toBeGreaterThan(4); // counters and histogram buckets, two codes
  expect(series(text, 'a.openfaas-fn')).toContain('gateway_function_invocation_total{function_name="a.openfaas-fn",code="200"} 1');

  deployed.delete('openfaas-fn/a');
  publish({ key: 'openfaas-fn/a' } as Change);
  for (let i = 0; i < 50 && [...router.all()].some((s) => s.ref.name === 'a'); i++) await new Promise((r) => setTimeout(r, 10));
  text = await metrics.registry.metrics();
  expect(series(text, 'a.openfaas-fn')).toEqual([]);
  expect(series(text, 'b.openfaas-fn')).toContain('gateway_function_invocation_total{function_name="b.openfaas-fn",code="500"} 1');

  // deployed again: counted from zero
  deployed.set('openfaas-fn/a', status('a'));
  await router.state({ name: 'a', namespace: 'openfaas-fn' });
  metrics.record('a.openfaas-fn', 200, 0.01);
  text = await metrics.registry.metrics();
  expect(series(text, 'a.openfaas-fn')).toContain('gateway_function_invocation_total{function_name="a.openfaas-fn",code="200"} 1');
  router.close();
});
