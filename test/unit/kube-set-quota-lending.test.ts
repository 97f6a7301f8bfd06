/**
 * The Kubernetes provider's <request, limit> (issue 24, the fixed cluster's lending): setQuota with
 * a limit resizes the pod in place to `requests.cpu` = quota × its declared cores and `limits.cpu`
 * = limit × them; without one, request = limit; a Guaranteed pod (its QoS class cannot change in a
 * resize) is held to request = limit; a bad limit is a 4xx naming the field. Against the fake API
 * server, whose kubelet reports what it applied in the container's status.
 */
import { cpuCores } from '../../node-runtime/cpu-values';
import { ErrorCode, PlatformError } from '../../gateway/errors';
import { kubeConfig } from '../../gateway/providers/kubernetes/kube-config';
import { KubernetesProvider } from '../../gateway/providers/kubernetes/kubernetes-provider';
import { parseDeployment } from '../../gateway/registry/function-spec';
import { FakeCluster } from '../helpers/fake-kube/cluster';
import { FakeKube } from '../helpers/fake-kube/server';
import { aFunction } from '../helpers/fixtures';
import { eventually } from '../helpers/platform';

type Res = { requests?: { cpu?: string }; limits?: { cpu?: string } };
type PodLike = { spec?: { containers?: Array<{ resources?: Res }> }; status?: { containerStatuses?: Array<{ resources?: Res }> } };
const ref = { name: 'f', namespace: 'openfaas-fn' };

describe('kubernetes provider: setQuota with a limit (lending)', () => {
  let kube: FakeKube;
  let cluster: FakeCluster;
  let provider: KubernetesProvider;
  let id: string;
  const pod = () => kube.store.get('v1/pods', 'openfaas-fn', id) as unknown as PodLike & { metadata: { annotations: Record<string, string> } };
  const spec = () => pod().spec!.containers![0].resources!;
  const applied = () => pod().status?.containerStatuses?.[0]?.resources;
  /** Cores of a resources' requests and limits (the API server keeps the quantity's form: `2000m`). */
  const cores = (r: Res | undefined) => ({ requests: r?.requests?.cpu && cpuCores(r.requests.cpu), limits: r?.limits?.cpu && cpuCores(r.limits.cpu) });

  beforeAll(async () => {
    kube = new FakeKube({ token: 't', podResize: true });
    await kube.start();
    kube.store.create('v1/namespaces', undefined, { metadata: { name: 'openfaas-fn', annotations: { openfaas: '1' } } }, 'namespaces');
    cluster = new FakeCluster(kube, { readyDelayMs: 30 });
    cluster.addNode('n1');
    cluster.start();
    provider = new KubernetesProvider(kubeConfig({ server: kube.url, token: 't', insecure: true }), { version: { release: 't', sha: 't' } });
    await provider.start();
    await provider.deploy(parseDeployment({ ...aFunction('f').minScale(1).build(), limits: { cpu: '2' } }));
    const ready = await eventually(async () => (await provider.endpoints(ref)).find((r) => r.state === 'ready'), 10000);
    expect(ready).toBeDefined();
    id = ready!.id;
  }, 30000);

  afterAll(async () => {
    await provider?.close();
    await cluster?.stop();
    await kube?.stop();
  });

  test.each([
    { quota: 0.3, limit: 1, requests: 0.6, limits: 2 },
    { quota: 0.5, limit: undefined, requests: 1, limits: 1 },
    { quota: 0.25, limit: 0.5, requests: 0.5, limits: 1 },
  ])('quota $quota, limit $limit → requests.cpu $requests, limits.cpu $limits (of 2 declared cores)', async ({ quota, limit, requests, limits }) => {
    await provider.setQuota(ref, id, quota, limit);
    expect(cores(spec())).toEqual({ requests, limits });
    expect(pod().metadata.annotations['mlfaas.io/quota']).toBe(String(quota));
    // the kubelet applied it (its status reports the container's new resources)
    expect(await eventually(() => JSON.stringify(cores(applied())) === JSON.stringify({ requests, limits }), 5000)).toBe(true);
    expect(kube.requests.filter((r) => r.resource === '/pods/resize').at(-1)?.status).toBe(200);
  });

  it('refuses a limit outside [quota, 1] with a 4xx naming the field, and changes nothing', async () => {
    await provider.setQuota(ref, id, 0.5);
    const before = JSON.stringify(spec());
    for (const limit of [0.4, 1.5, NaN]) {
      const e = await provider.setQuota(ref, id, 0.5, limit).then(() => undefined, (x: unknown) => x as PlatformError);
      expect(e).toBeInstanceOf(PlatformError);
      expect(e!.code).toBe(ErrorCode.Validation); // 400 with a JSON body naming the field
      expect(e!.field).toBe('limit');
      expect(JSON.stringify(spec())).toBe(before);
    }
  });

  it('holds a Guaranteed pod to request = limit (its QoS class cannot change in a resize)', async () => {
    const cur = kube.store.get('v1/pods', 'openfaas-fn', id)!;
    kube.store.update('v1/pods', 'openfaas-fn', id, { ...cur, metadata: { ...cur.metadata, resourceVersion: undefined },
      status: { ...cur.status, qosClass: 'Guaranteed' } }, 'pods', 'status');
    // the provider's watch sees the class, then the resize keeps request = limit
    expect(await eventually(async () => {
      await provider.setQuota(ref, id, 0.3, 1);
      return cores(spec()).limits === 0.6;
    }, 5000)).toBe(true);
    expect(cores(spec())).toEqual({ requests: 0.6, limits: 0.6 });
  });
});
