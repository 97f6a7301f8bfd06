/**
 * deploy/kubernetes: the kustomization builds offline, every object fits client-node's model types
 * with no unknown field, references resolve (service accounts, secrets, config maps, services'
 * selectors and ports, probes), and RBAC grants exactly the verbs the Kubernetes provider calls
 * for each component (recorded from the fake API server).
 */
import * as k8s from '@kubernetes/client-node';
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { kubeConfig } from '../../gateway/providers/kubernetes/kube-config';
import { KubernetesProvider } from '../../gateway/providers/kubernetes/kubernetes-provider';
import { KubeLease } from '../../gateway/providers/kubernetes/kube-lease';
import { NodeAgent } from '../../gateway/providers/kubernetes/node-agent';
import { KubeTrainingFunctions, kubeTrainingCapacity } from '../../gateway/providers/kubernetes/kube-training';
import { KubeJob, TRAINING_FN_LABEL } from '../../gateway/providers/kubernetes/training-pods';
import { manageVirtualClusters } from '../../gateway/providers/kubernetes/vc-manager';
import { manageLoans } from '../../autoscaler/training/fapes/manager';
import { moveNode } from '../../gateway/providers/kubernetes/virtual-clusters';
import type { JobRecord } from '../../gateway/jobs/job-record';
import { profileModel } from '../../gateway/jobs/profile-run';
import { placeOf } from '../../gateway/jobs/training-capacity';
import { parseDeployment } from '../../gateway/registry/function-spec';
import { FakeCluster, type PodRuntime } from '../helpers/fake-kube/cluster';
import { FakeKube, type Recorded } from '../helpers/fake-kube/server';
import { aFunction } from '../helpers/fixtures';
import { eventually } from '../helpers/platform';

type Any = any; // eslint-disable-line @typescript-eslint/no-explicit-any
const DIR = join(__dirname, '../../deploy/kubernetes');

/** The objects of the kustomization: `kubectl kustomize` where kubectl exists, else its resources read in order. */
function build(): Any[] {
  const kustom = parseAllDocuments(readFileSync(join(DIR, 'kustomization.yaml'),
    'utf8'))[0].toJSON() as { resources: string[]; images: Array<{ name: string; newTag: string }> };
  const own = kustom.resources.flatMap((f) => parseAllDocuments(readFileSync(join(DIR, f), 'utf8')).map((d) => d.toJSON()).filter(Boolean));
  for (const o of own) for (const c of o.spec?.template?.spec?.containers ?? []) {
    const img = kustom.images.find((i) => i.name === c.image);
    if (img) c.image = `${img.name}:${img.newTag}`;
  }
  return own;
}

function kubectl(): string | undefined {
  try {
    return execFileSync('kubectl', ['kustomize', DIR], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
}

/** Paths of fields the model type does not know (client-node's attribute maps, recursively). */
function unknownFields(o: Any, type: string, path = ''): string[] {
  if (o === null || o === undefined) return [];
  const arr = /^Array<(.+)>$/.exec(type);
  if (arr) return (o as Any[]).flatMap((x, i) => unknownFields(x, arr[1], `${path}[${i}]`));
  if (type.startsWith('{ [key: string]:')) {
    const inner = /: (.+); }$/.exec(type)![1];
    return Object.entries(o).flatMap(([k, v]) => unknownFields(v, inner, `${path}.${k}`));
  }
  const cls = (k8s as Any)[type];
  if (!cls?.getAttributeTypeMap) return [];
  const attrs = cls.getAttributeTypeMap() as Array<{ baseName: string; type: string }>;
  return Object.entries(o).flatMap(([k, v]) => {
    const a = attrs.find((x) => x.baseName === k);
    return a ? unknownFields(v, a.type, `${path}.${k}`) : [`${path}.${k}`];
  });
}

const MODEL: Record<string, string> = {
  Namespace: 'V1Namespace', ServiceAccount: 'V1ServiceAccount', ClusterRole: 'V1ClusterRole', ClusterRoleBinding: 'V1ClusterRoleBinding',
  Role: 'V1Role', RoleBinding: 'V1RoleBinding', Secret: 'V1Secret', ConfigMap: 'V1ConfigMap', Service: 'V1Service', Deployment: 'V1Deployment',
  StatefulSet: 'V1StatefulSet', DaemonSet: 'V1DaemonSet', PersistentVolumeClaim: 'V1PersistentVolumeClaim',
};

const example = (f: string) => parseAllDocuments(readFileSync(join(DIR, f), 'utf8'))[0].toJSON();

describe('deploy/kubernetes', () => {
  const objs = build();
  const find = (kind: string, name: string, ns?: string) =>
    objs.find((o) => o.kind === kind && o.metadata.name === name && (ns === undefined || o.metadata.namespace === ns));
  const workloads = objs.filter((o) => ['Deployment', 'StatefulSet', 'DaemonSet'].includes(o.kind));

  it('builds with kubectl kustomize (offline) into the same objects', () => {
    const out = kubectl();
    if (out === undefined) return void console.warn('kubectl not installed: the kustomization was read directly');
    const built = parseAllDocuments(out).map((d) => d.toJSON());
    const ids = (xs: Any[]) => xs.map((o) => `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`).sort();
    expect(ids(built)).toEqual(ids(objs));
    expect(built.filter((o) => o.kind === 'Deployment').map((o) => o.spec.template.spec.containers[0].image).sort())
      .toEqual(['mlfaas/autoscaler:0.1.0', 'mlfaas/gateway:0.1.0']);
  });

  it('holds only fields the API knows', () => {
    for (const o of [...objs, example('basic-auth.example.yaml')]) {
      expect(MODEL[o.kind]).toBeDefined();
      expect({ object: `${o.kind}/${o.metadata.name}`, unknown: unknownFields(o, MODEL[o.kind]) })
        .toEqual({ object: `${o.kind}/${o.metadata.name}`, unknown: [] });
    }
  });

  it('references only objects it defines, and services reach their pods', () => {
    for (const w of workloads) {
      const ns = w.metadata.namespace;
      const pod = w.spec.template;
      expect(w.spec.selector.matchLabels)
        .toEqual(expect.objectContaining(Object.fromEntries(Object.entries(w.spec.selector.matchLabels).map(([k]) => [k, pod.metadata.labels[k]]))));
      if (pod.spec.serviceAccountName) expect(find('ServiceAccount', pod.spec.serviceAccountName, ns)).toBeDefined();
      for (const v of pod.spec.volumes ?? []) {
        // basic-auth is the one Secret the user makes (README; basic-auth.example.yaml), so apply never overwrites a password
        if (v.secret)
          expect(find('Secret', v.secret.secretName, ns) ?? (v.secret.secretName === 'basic-auth' ? example('basic-auth.example.yaml') : undefined))
            .toBeDefined();
        if (v.configMap) expect(find('ConfigMap', v.configMap.name, ns)).toBeDefined();
      }
      for (const c of pod.spec.containers) {
        const ports = (c.ports ?? []).map((p: Any) => p.name);
        for (const probe of [c.readinessProbe, c.livenessProbe].filter(Boolean)) if (probe.httpGet && typeof probe.httpGet.port === 'string')
          expect(ports).toContain(probe.httpGet.port);
        for (const m of c.volumeMounts ?? [])
          expect((pod.spec.volumes ?? []).map((v: Any) => v.name).concat((w.spec.volumeClaimTemplates ?? []).map((t: Any) => t.metadata.name)))
            .toContain(m.name);
        for (const e of c.env ?? []) if (e.value?.startsWith?.('redis://'))
          expect(find('Service', new URL(e.value).hostname.split('.')[0], e.value.split('.')[1])).toBeDefined();
      }
    }
    for (const s of objs.filter((o) => o.kind === 'Service')) {
      const target = workloads.find((w) => w.metadata.namespace === s.metadata.namespace && Object.entries(s.spec.selector)
        .every(([k, v]) => w.spec.template.metadata.labels[k] === v));
      expect({ service: s.metadata.name, backed: !!target }).toEqual({ service: s.metadata.name, backed: true });
      const ports = target.spec.template.spec.containers.flatMap((c: Any) => c.ports ?? []);
      for (const p of s.spec.ports) expect(ports.some((cp: Any) => cp.name === p.targetPort || cp.containerPort === p.targetPort)).toBe(true);
    }
    for (const b of objs.filter((o) => o.kind.endsWith('RoleBinding'))) {
      expect(find(b.roleRef.kind, b.roleRef.name)).toBeDefined();
      for (const s of b.subjects) expect(find('ServiceAccount', s.name, s.namespace)).toBeDefined();
    }
  });

  it('keeps Redis data on a volume with append-only persistence', () => {
    const redis = find('StatefulSet', 'redis', 'mlfaas');
    expect(redis.spec.volumeClaimTemplates[0].metadata.name).toBe('data');
    expect(find('ConfigMap', 'redis-config', 'mlfaas').data['redis.conf']).toMatch(/appendonly yes/);
  });

  describe('RBAC grants exactly what each component calls', () => {
    /** Every (resource, verb) a service account is bound to, through ClusterRoleBindings and RoleBindings. */
    const granted = (sa: string) => {
      const bindings = objs.filter((o) => o.kind.endsWith('RoleBinding') && o.subjects.some((x: Any) => x.kind === 'ServiceAccount' && x.name === sa));
      const rules = bindings.flatMap((b) => find(b.roleRef.kind, b.roleRef.name).rules);
      return new Set<string>(rules.flatMap((x: Any) => x.resources.flatMap((res: string) => x.verbs.map((v: string) => `${x.apiGroups[0]}/${res}:${v}`))));
    };
    const used = (reqs: Recorded[]) => new Set(reqs.map((r) => `${r.resource}:${r.verb}`));

    /** Function pods run nothing; a training pod prints the harness's report lines and exits 0. */
    const runtime: PodRuntime = async (pod, log) => {
      if (!pod.metadata.labels?.[TRAINING_FN_LABEL]) return { podIP: '127.0.0.1', stop: async () => undefined };
      let stop = false;
      const exited = (async () => {
        log(JSON.stringify({ type: 'start', trainExamples: 64 }));
        for (let step = 1; step <= 2 && !stop; step++) {
          await new Promise((r) => setTimeout(r, 30));
          log(JSON.stringify({ type: 'progress', epoch: step, epochs: 2, step }));
        }
        log(JSON.stringify({ type: 'done' }));
        return 0;
      })();
      return { podIP: '127.0.0.1', exited, stop: async () => void (stop = true) };
    };

    async function record(run: (p: KubernetesProvider, kube: FakeKube) => Promise<void>): Promise<Set<string>> {
      const kube = new FakeKube({ token: 'r' });
      await kube.start();
      kube.store.create('v1/namespaces', undefined, { metadata: { name: 'openfaas-fn', annotations: { openfaas: '1' } } }, 'namespaces');
      const cluster = new FakeCluster(kube, { readyDelayMs: 20, runtime });
      cluster.addNode('n1', { labels: { 'mlfaas.io/vc': 'inference', 'mlfaas.io/home-vc': 'inference' } });
      cluster.addNode('t1', { labels: { 'mlfaas.io/vc': 'training' } });
      cluster.start();
      const p = new KubernetesProvider(kubeConfig({ server: kube.url, token: 'r', insecure: true }), { version: { release: 't', sha: 't' } });
      try {
        await p.start();
        await run(p, kube);
      } finally {
        await p.close();
        await cluster.stop();
        await kube.stop();
      }
      return used(kube.requests);
    }
    const ref = { name: 'f', namespace: 'openfaas-fn' };

    it('gateway: the provider calls the API routes make', async () => {
      const calls = await record(async (p, kube) => {
        await p.deploy(parseDeployment(aFunction('f').minScale(1).build()));
        await p.update(parseDeployment(aFunction('f').minScale(1).env('A', '1').build()));
        await p.get(ref);
        await p.list('openfaas-fn');
        await p.list();
        await eventually(async () => (await p.endpoints(ref)).some((r) => r.state === 'ready'), 5000);
        for await (const _ of p.logs(ref, { follow: false, signal: new AbortController().signal })) void _;
        await p.scale(ref, 0);
        await p.wake!(ref);
        await p.namespaces();
        await p.secrets.create({ name: 's', namespace: 'openfaas-fn', value: 'v' });
        await p.secrets.list('openfaas-fn');
        await p.secrets.update({ name: 's', namespace: 'openfaas-fn', value: 'w' });
        await p.secrets.remove('s', 'openfaas-fn');
        await p.remove(ref);
        // admission of a training job: the training nodes, and a profile run as a pod
        const kc = kubeConfig({ server: kube.url, token: 'r', insecure: true });
        const core = kc.makeApiClient(k8s.CoreV1Api);
        const capacity = kubeTrainingCapacity(core, 2);
        const training = new KubeTrainingFunctions(kc, core, undefined as never, p, capacity, { checkpointClaim: 'c', profileTimeoutMs: 10_000 });
        const prof = await profileModel(training.profileStarter('img:1', 'openfaas-fn', 'f', await capacity.now()), {}, 32, 10_000);
        expect(prof.trainExamples).toBe(64);
      });
      expect([...calls].sort()).toEqual([...granted('mlfaas-gateway')].sort());
    });

    it('autoscaler: the provider calls autoscaler/live makes', async () => {
      // the provider methods the live autoscaler calls (kept in step with its sources below)
      const live = join(__dirname, '../../autoscaler/live');
      const methods = new Set(readdirSync(live).filter((f) => f.endsWith('.ts'))
        .flatMap((f) => [...readFileSync(join(live, f), 'utf8').matchAll(/provider\.([a-zA-Z]+)(?:\?\.)?\(/g)].map((m) => m[1])));
      // capability() reads Redis, not the API server; enforcement() and declaredEnforcement() read
      // nothing (Kubernetes declares from its configuration); setSmShare patches a pod's annotation
      // as setQuota does; the others are exercised below
      expect([...methods].sort())
        .toEqual(['capability', 'declaredEnforcement', 'endpoints', 'enforcement', 'list', 'scale', 'setQuota', 'setSmShare', 'setWeight']);
      // the function is made first (its calls are the gateway's and are left out), then the autoscaler's calls
      const replicaCalls = await record(async (p, kube) => {
        await p.deploy(parseDeployment({ ...aFunction('f').minScale(2).build(), limits: { cpu: '1' } }));
        await eventually(async () => (await p.endpoints(ref)).filter((r) => r.state === 'ready').length === 2, 5000);
        const [a, b] = await p.endpoints(ref);
        await p.setQuota(ref, a.id, 0.5);
        await p.setWeight(ref, a.id, 2);
        await p.scale(ref, 1, [b.id]);
        await p.list();
        // what the watch has not seen (gone meanwhile) is read from the API
        await expect(p.setWeight(ref, 'gone-pod', 2)).rejects.toThrow(/not found/);
        await expect(p.scale({ name: 'gone-fn', namespace: 'openfaas-fn' }, 1)).rejects.toThrow(/not found/);
        // its leader election: create, renew, release
        const lease = new KubeLease(kubeConfig({ server: kube.url, token: 'r', insecure: true }).makeApiClient(k8s.CoordinationV1Api), 'openfaas-fn',
          'mlfaas-autoscaler', 5000);
        await lease.attempt();
        await lease.attempt();
        await lease.close();
        // the training round loop: the training nodes, a job's pod followed to its end, and one deleted on a change
        const kc = kubeConfig({ server: kube.url, token: 'r', insecure: true });
        const core = kc.makeApiClient(k8s.CoreV1Api);
        const nodes = await kubeTrainingCapacity(core, 2).now();
        const rec = { id: 'job1', function: 'f', namespace: 'openfaas-fn', model: 'm', epochs: 2, batchSize: 8, learningRate: 0.1 } as unknown as JobRecord;
        const job = new KubeJob(kc, core, rec, { progress: () => undefined, log: () => undefined },
          { namespace: 'openfaas-fn', image: 'img:1', checkpointClaim: 'c' });
        await job.setWorkers(1, placeOf(nodes, [0]));
        await job.setWorkers(2, placeOf(nodes, [0, 1]));
        expect(await job.ended).toBe('completed');
        // FaPES' manager: the inference nodes and the pods on them, and a node moved (cordon, evict, relabel)
        await manageVirtualClusters(core, manageLoans);
        const moved = await moveNode(core, 'n1', 'training');
        expect(moved.evicted.length).toBeGreaterThan(0);
      });
      // the deploy's creates are the gateway's; the Lease's and the training pods' creates are the autoscaler's
      const autoscaler = new Set([...replicaCalls].filter((c) => !/:create$/.test(c) || c.startsWith('coordination.k8s.io/leases') || c === '/pods:create' ||
        c === '/pods/eviction:create'));
      expect([...autoscaler].sort()).toEqual([...granted('mlfaas-autoscaler')].sort());
    });

    it('node agent: its pod watch', async () => {
      const calls = await record(async (p, kube) => {
        await p.deploy(parseDeployment(aFunction('f').minScale(1).build()));
        const before = kube.requests.length;
        const agent = new NodeAgent(kubeConfig({ server: kube.url, token: 'r', insecure: true }), { nodeName: 'n1', cpuCgroupRoot: '/nonexistent', gpus: 0 });
        await agent.start();
        await eventually(async () => (await (await fetch(`${agent.url}/metrics`)).text()).includes('mlfaas_node_capacity'), 2000);
        await agent.stop();
        kube.requests.splice(0, before); // the provider's calls before the agent started
      });
      expect([...calls].sort()).toEqual([...granted('mlfaas-node-agent')].sort());
    });
  });
});
