/**
 * @kubernetes/client-node, as the provider uses it, against the fake API server: typed calls,
 * errors as ApiException with the Status body, and an informer that survives a dropped watch and
 * a 410 Gone (it relists).
 */
import { ApiException, AppsV1Api, CoreV1Api, makeInformer, PatchStrategy, setHeaderOptions, type V1Deployment } from '@kubernetes/client-node';
import { kubeConfig } from '../../gateway/providers/kubernetes/kube-config';
import { FakeKube } from '../helpers/fake-kube/server';
import { eventually } from '../helpers/platform';

const dep = (name: string): V1Deployment => ({
  metadata: { name, labels: { faas_function: name } },
  spec: { replicas: 0, selector: { matchLabels: { faas_function: name } },
    template: { metadata: { labels: { faas_function: name } }, spec: { containers: [{ name, image: 'x/y:1' }] } } },
});

describe('client-node against the fake API server', () => {
  const kube = new FakeKube({ token: 'tok', bookmarkMs: 100 });
  let apps: AppsV1Api;
  let core: CoreV1Api;
  beforeAll(async () => {
    await kube.start();
    const kc = kubeConfig({ server: kube.url, token: 'tok', insecure: true });
    apps = kc.makeApiClient(AppsV1Api);
    core = kc.makeApiClient(CoreV1Api);
    await core.createNamespace({ body: { metadata: { name: 'openfaas-fn' } } });
  });
  afterAll(() => kube.stop());

  it('creates, reads, patches, and gets 409 and 404 as ApiException with the Status', async () => {
    const made = await apps.createNamespacedDeployment({ namespace: 'openfaas-fn', body: dep('a') });
    expect(made.metadata?.uid).toEqual(expect.any(String));
    const e = await apps.createNamespacedDeployment({ namespace: 'openfaas-fn', body: dep('a') }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(ApiException);
    expect((e as ApiException<string>).code).toBe(409);
    expect(JSON.parse((e as ApiException<string>).body)).toEqual(expect.objectContaining({ reason: 'AlreadyExists' }));
    const missing = await apps.readNamespacedDeployment({ name: 'zz', namespace: 'openfaas-fn' }).catch((x: ApiException<string>) => x.code);
    expect(missing).toBe(404);
    const patched = await apps.patchNamespacedDeployment({ name: 'a', namespace: 'openfaas-fn', body: { metadata: { labels: { team: 'ml' } } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
    expect(patched.metadata?.labels).toEqual({ faas_function: 'a', team: 'ml' });
    const scaled = await apps.patchNamespacedDeploymentScale({ name: 'a', namespace: 'openfaas-fn',
      body: [{ op: 'replace', path: '/spec/replicas', value: 2 }] });
    expect(scaled.spec?.replicas).toBe(2);
    expect(kube.requests.filter((r) => r.verb === 'patch').map((r) => r.contentType)).toEqual(['application/merge-patch+json', 'application/json-patch+json']);
  });

  it('keeps an informer current through a dropped watch and a 410 Gone', async () => {
    const informer = makeInformer(kubeConfig({ server: kube.url, token: 'tok', insecure: true }), '/apis/apps/v1/namespaces/openfaas-fn/deployments', () =>
      apps.listNamespacedDeployment({ namespace: 'openfaas-fn' }));
    const seen = new Set<string>();
    informer.on('add', (d) => seen.add(d.metadata!.name!));
    let stopped = false;
    informer.on('error', () => {
      if (!stopped) setTimeout(() => void informer.start(), 100);
    });
    await informer.start();
    expect(await eventually(() => seen.has('a'), 5000)).toBe(true);
    await apps.createNamespacedDeployment({ namespace: 'openfaas-fn', body: dep('b') });
    expect(await eventually(() => seen.has('b'), 5000)).toBe(true);
    // the watch ends and history is compacted meanwhile: the informer must relist to see 'c'
    kube.store.compact();
    kube.dropWatches();
    await apps.createNamespacedDeployment({ namespace: 'openfaas-fn', body: dep('c') });
    expect(await eventually(() => seen.has('c') && informer.list().length === 3, 5000)).toBe(true);
    stopped = true;
    await informer.stop();
  });
});
