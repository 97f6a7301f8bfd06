/** Leader election on a Kubernetes Lease against the fake API server, with a hand-driven clock. */
import { CoordinationV1Api } from '@kubernetes/client-node';
import { kubeConfig } from '../../gateway/providers/kubernetes/kube-config';
import { KubeLease } from '../../gateway/providers/kubernetes/kube-lease';
import { FakeKube } from '../helpers/fake-kube/server';

describe('KubeLease', () => {
  const kube = new FakeKube({ token: 'l' });
  let api: CoordinationV1Api;
  let t = 1_000_000;
  const clock = () => t;
  beforeAll(async () => {
    await kube.start();
    kube.store.create('v1/namespaces', undefined, { metadata: { name: 'mlfaas' } }, 'namespaces');
    api = kubeConfig({ server: kube.url, token: 'l', insecure: true }).makeApiClient(CoordinationV1Api);
  });
  afterAll(() => kube.stop());

  it('has one holder; a candidate takes over only after seeing the lease unrenewed for the lease time', async () => {
    const a = new KubeLease(api, 'mlfaas', 'autoscaler', 5000, 'a', clock);
    const b = new KubeLease(api, 'mlfaas', 'autoscaler', 5000, 'b', clock);
    await a.attempt();
    await b.attempt();
    expect([a.isHeld, b.isHeld]).toEqual([true, false]);
    const lease = kube.store.get('coordination.k8s.io/v1/leases', 'mlfaas', 'autoscaler')!;
    expect(lease.spec).toEqual(expect.objectContaining({ holderIdentity: 'a', leaseDurationSeconds: 5, leaseTransitions: 0 }));
    expect(String(lease.spec!.renewTime)).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/); // MicroTime
    // a renews; b keeps seeing changes, so it waits
    t += 3000;
    await a.attempt();
    await b.attempt();
    t += 3000;
    await b.attempt();
    expect([a.isHeld, b.isHeld]).toEqual([true, false]);
    // a stops renewing (a dead process): b takes over once it has seen the same version for 5 s
    t += 5000;
    expect(a.isHeld).toBe(false); // a steps down by itself, unrenewed for the lease time
    await b.attempt();
    expect(b.isHeld).toBe(true);
    expect(kube.store.get('coordination.k8s.io/v1/leases', 'mlfaas', 'autoscaler')!.spec)
      .toEqual(expect.objectContaining({ holderIdentity: 'b', leaseTransitions: 1 }));
    // a comes back: the lease is b's
    await a.attempt();
    expect(a.isHeld).toBe(false);
    await b.close();
    expect(kube.store.get('coordination.k8s.io/v1/leases', 'mlfaas', 'autoscaler')!.spec!.holderIdentity).toBe('');
    // released: taken at once
    await a.attempt();
    expect(a.isHeld).toBe(true);
    await a.close();
  });

  it('lets exactly one of two simultaneous candidates win (409 for the other)', async () => {
    kube.store.remove('coordination.k8s.io/v1/leases', 'mlfaas', 'autoscaler', 'leases');
    const c = new KubeLease(api, 'mlfaas', 'autoscaler', 5000, 'c', clock);
    const d = new KubeLease(api, 'mlfaas', 'autoscaler', 5000, 'd', clock);
    await Promise.all([c.attempt(), d.attempt()]);
    expect([c.isHeld, d.isHeld].filter(Boolean)).toHaveLength(1);
    await c.close();
    await d.close();
  });
});
