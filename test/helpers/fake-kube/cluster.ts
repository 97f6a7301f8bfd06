/**
 * The controllers and kubelets behind the fake API server, so a provider's reaction to churn can
 * be tested: a Deployment controller (pods per template hash, rolling replacement, scale-down
 * order by `controller.kubernetes.io/pod-deletion-cost`, then not-ready first, then newest), a
 * scheduler (node Ready and schedulable, nodeSelector, required node affinity, taints and
 * tolerations, cpu / memory / nvidia.com/gpu requests against allocatable), kubelets that start a
 * pod's containers through a `PodRuntime` (real processes in the contract test) and report Ready
 * after `readyDelayMs`, garbage collection of a deleted Deployment's pods, and a node lifecycle
 * controller (NotReady → pods not ready → evicted after `evictAfterMs`).
 *
 * Simplifications (said in the README): no ReplicaSet objects (pods name one in their
 * ownerReferences), deletion is immediate (no graceful deletionTimestamp phase), a rolling update
 * surges every new pod before removing old ones.
 */
import { createHash } from 'node:crypto';
import { cpuCores, memoryBytes } from '../../../node-runtime/cgroups';
import type { FakeKube } from './server';
import { suffix } from './resources';
import type { KObject, WatchEvent } from './store';

export interface RunningPod {
  podIP: string;
  stop(): Promise<void>;
  /** Applies a resize the kubelet accepted (the node agent's job on a real node). */
  resize?(resources: unknown): Promise<void>;
  /** The container's exit code, once it exits by itself (not through stop()). */
  exited?: Promise<number | null>;
}

/** Starts a pod's main container; `log` receives its output lines. */
export type PodRuntime = (pod: KObject, log: (line: string) => void) => Promise<RunningPod>;

export interface ClusterOptions {
  readyDelayMs?: number;
  runtime?: PodRuntime;
  evictAfterMs?: number;
}

type Obj = Record<string, unknown>;
const DEP = 'apps/v1/deployments';
const POD = 'v1/pods';
const NODE = 'v1/nodes';

const cpuMilli = (q: unknown) => (q === undefined ? 0 : cpuCores(String(q)) * 1000);
const bytes = (q: unknown) => (q === undefined ? 0 : memoryBytes(String(q)));

const requestsOf = (pod: KObject) =>
  ((pod.spec?.containers ?? []) as Obj[]).reduce<{ cpu: number; mem: number; gpu: number }>(
    (a, c) => {
      const r = (c.resources ?? {}) as { requests?: Obj; limits?: Obj };
      const req = { ...(r.limits ?? {}), ...(r.requests ?? {}) };
      return { cpu: a.cpu + cpuMilli(req.cpu), mem: a.mem + bytes(req.memory), gpu: a.gpu + Number((r.limits ?? {})['nvidia.com/gpu'] ?? 0) };
    },
    { cpu: 0, mem: 0, gpu: 0 },
  );

/** The first container's readiness probe, when it is an HTTP GET. */
function readinessGet(pod: KObject): { path: string; port: number } | undefined {
  const c = ((pod.spec?.containers ?? []) as Obj[])[0];
  const get = ((c?.readinessProbe as Obj | undefined)?.httpGet ?? undefined) as { path?: string; port?: number } | undefined;
  return get?.port ? { path: get.path ?? '/', port: Number(get.port) } : undefined;
}

const isReady = (pod: KObject) => ((pod.status?.conditions ?? []) as Obj[]).some((c) => c.type === 'Ready' && c.status === 'True');
const nodeReady = (n: KObject) => ((n.status?.conditions ?? []) as Obj[]).some((c) => c.type === 'Ready' && c.status === 'True');

function matchExpr(labels: Record<string, string>, e: { key: string; operator: string; values?: string[] }): boolean {
  const v = labels[e.key];
  switch (e.operator) {
    case 'In':
      return v !== undefined && (e.values ?? []).includes(v);
    case 'NotIn':
      return v === undefined || !(e.values ?? []).includes(v);
    case 'Exists':
      return v !== undefined;
    case 'DoesNotExist':
      return v === undefined;
    default:
      return false;
  }
}

/** Why `node` cannot take `pod`, or undefined when it can (the scheduler's filter plugins). */
export function unfit(pod: KObject, node: KObject, onNode: KObject[]): string | undefined {
  const labels = node.metadata.labels ?? {};
  const spec = (pod.spec ?? {}) as Obj;
  if (!nodeReady(node)) return 'node(s) were not ready';
  if (node.spec?.unschedulable) return 'node(s) were unschedulable';
  for (const [k, v] of Object.entries((spec.nodeSelector ?? {}) as Record<string, string>)) {
    if (labels[k] !== v) return "node(s) didn't match Pod's node affinity/selector";
  }
  type Terms = { nodeSelectorTerms?: Array<{ matchExpressions?: Array<{ key: string; operator: string; values?: string[] }> }> };
  const terms = ((spec.affinity as Obj | undefined)?.nodeAffinity as Obj | undefined)?.requiredDuringSchedulingIgnoredDuringExecution as Terms | undefined;
  if (terms?.nodeSelectorTerms?.length && !terms.nodeSelectorTerms.some((t) => (t.matchExpressions ?? []).every((e) => matchExpr(labels, e))))
    return "node(s) didn't match Pod's node affinity/selector";
  const tolerations = (spec.tolerations ?? []) as Array<{ key?: string; operator?: string; value?: string; effect?: string }>;
  for (const t of (node.spec?.taints ?? []) as Array<{ key: string; value?: string; effect: string }>) {
    if (t.effect === 'PreferNoSchedule') continue;
    const ok = tolerations.some((x) => (!x.effect || x.effect === t.effect) &&
      (x.operator === 'Exists' ? !x.key || x.key === t.key : x.key === t.key && (x.value ?? '') === (t.value ?? '')));
    if (!ok) return `node(s) had untolerated taint {${t.key}: ${t.value ?? ''}}`;
  }
  const alloc = (node.status?.allocatable ?? {}) as Obj;
  const used = onNode.map(requestsOf).reduce((a, b) => ({ cpu: a.cpu + b.cpu, mem: a.mem + b.mem, gpu: a.gpu + b.gpu }), { cpu: 0, mem: 0, gpu: 0 });
  const want = requestsOf(pod);
  if (want.cpu && used.cpu + want.cpu > cpuMilli(alloc.cpu)) return 'Insufficient cpu';
  if (want.mem && used.mem + want.mem > bytes(alloc.memory)) return 'Insufficient memory';
  if (want.gpu && used.gpu + want.gpu > Number(alloc['nvidia.com/gpu'] ?? 0)) return 'Insufficient nvidia.com/gpu';
  return undefined;
}

export class FakeCluster {
  private readonly running = new Map<string, RunningPod | 'starting'>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private unsubscribe?: () => void;
  private queued = false;
  private stopped = false;

  constructor(
    readonly kube: FakeKube,
    readonly opts: ClusterOptions = {},
  ) {}

  private get store() {
    return this.kube.store;
  }

  addNode(name: string,
    o: { labels?: Record<string, string>; cpu?: string; memory?: string; gpus?: number;
      taints?: Array<{ key: string; value?: string; effect: string }>; } = {}): void {
    const capacity = { cpu: o.cpu ?? '16', memory: o.memory ?? '64Gi', pods: '110', ...(o.gpus ? { 'nvidia.com/gpu': String(o.gpus) } : {}) };
    this.store.create(NODE, undefined, {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name, labels: { 'kubernetes.io/hostname': name, 'kubernetes.io/os': 'linux', ...(o.labels ?? {}) } },
      spec: o.taints ? { taints: o.taints } : {},
      status: { capacity, allocatable: capacity, conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady' }],
        addresses: [{ type: 'InternalIP', address: `10.0.0.${this.store.list(NODE).length + 1}` }] },
    }, 'nodes');
  }

  /** A node's kubelet stops (or resumes) posting status; its pods stop being ready, and after evictAfterMs are evicted. */
  setNodeReady(name: string, ready: boolean): void {
    const n = this.store.get(NODE, undefined, name)!;
    n.status = { ...n.status, conditions: [{ type: 'Ready', status: ready ? 'True' : 'Unknown', reason: ready ? 'KubeletReady' : 'NodeStatusUnknown' }] };
    this.store.update(NODE, undefined, name, { ...n, metadata: { ...n.metadata, resourceVersion: undefined } }, 'nodes', 'status');
    if (!ready) {
      for (const p of this.store.list(POD).filter((x) => x.spec?.nodeName === name)) this.setPodReady(p, false);
      this.later(() => {
        const now = this.store.get(NODE, undefined, name);
        if (now && !nodeReady(now)) for (const p of this.store.list(POD).filter((x) => x.spec?.nodeName === name)) this.deletePod(p);
      }, this.opts.evictAfterMs ?? 2000);
    }
    this.kick();
  }

  start(): void {
    this.unsubscribe = this.store.subscribe((e) => this.onEvent(e));
    this.kick();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.unsubscribe?.();
    for (const t of this.timers) clearTimeout(t);
    await Promise.all([...this.running.values()].map((r) => (r === 'starting' ? undefined : r.stop().catch(() => undefined))));
    this.running.clear();
  }

  /** Polls `url` until it answers 200 (true), the pod stops running or the cluster stops (false), 60 s at most. */
  private async probeUntilReady(url: string, uid: string): Promise<boolean> {
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline && !this.stopped && this.running.has(uid)) {
      const ok = await fetch(url, { signal: AbortSignal.timeout(1000) }).then((r) => (void r.body?.cancel(), r.status === 200), () => false);
      if (ok) return true;
      await new Promise((r) => setTimeout(r, 50));
    }
    return false;
  }

  private later(f: () => void, ms: number): void {
    const t = setTimeout(() => {
      this.timers.delete(t);
      if (!this.stopped) f();
    }, ms);
    this.timers.add(t);
  }

  private onEvent(e: WatchEvent): void {
    if (e.gvr === POD && e.type === 'DELETED') {
      const r = this.running.get(e.object.metadata.uid!);
      this.running.delete(e.object.metadata.uid!);
      if (r && r !== 'starting') void r.stop().catch(() => undefined);
    }
    if (e.gvr === POD && e.type === 'MODIFIED') void this.maybeResize(e.object);
    if (e.gvr === DEP || e.gvr === POD || e.gvr === NODE) this.kick();
  }

  /** Reconciles soon, once per burst of events. */
  private kick(): void {
    if (this.queued || this.stopped) return;
    this.queued = true;
    setImmediate(() => {
      this.queued = false;
      if (!this.stopped) this.reconcile();
    });
  }

  private reconcile(): void {
    for (const d of this.store.list(DEP)) this.reconcileDeployment(d);
    // garbage collection: pods whose Deployment is gone
    const deps = new Set(this.store.list(DEP).map((d) => d.metadata.uid));
    for (const p of this.store.list(POD)) {
      const owner = p.metadata.ownerReferences?.[0];
      if (owner?.kind === 'ReplicaSet' && !deps.has(owner.uid.split('/')[0])) this.deletePod(p);
    }
    this.schedule();
  }

  private reconcileDeployment(d: KObject): void {
    const ns = d.metadata.namespace!;
    const tpl = d.spec!.template as { metadata?: KObject['metadata']; spec: Obj };
    const hash = createHash('sha256').update(JSON.stringify(tpl)).digest('hex').slice(0, 10);
    // a ReplicaSet replaces its pods that ended (Failed / Succeeded count as inactive)
    for (const p of this.store.list(POD, ns)) {
      const ended = p.status?.phase === 'Failed' || p.status?.phase === 'Succeeded';
      if (ended && p.metadata.ownerReferences?.[0]?.uid.startsWith(`${d.metadata.uid}/`)) this.deletePod(p);
    }
    const mine = this.store.list(POD, ns).filter((p) => p.metadata.ownerReferences?.[0]?.uid.startsWith(`${d.metadata.uid}/`));
    const current = mine.filter((p) => p.metadata.labels?.['pod-template-hash'] === hash);
    const old = mine.filter((p) => p.metadata.labels?.['pod-template-hash'] !== hash);
    const want = d.spec!.replicas as number;
    for (let i = current.length; i < want; i++) {
      this.store.create(POD, ns, {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: {
          name: `${d.metadata.name}-${hash}-${suffix()}`,
          labels: { ...(tpl.metadata?.labels ?? {}), 'pod-template-hash': hash },
          annotations: { ...(tpl.metadata?.annotations ?? {}) },
          ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: `${d.metadata.name}-${hash}`, uid: `${d.metadata.uid}/${hash}`,
            controller: true }],
        },
        spec: structuredClone(tpl.spec),
        status: { phase: 'Pending', qosClass: 'BestEffort' },
      }, 'pods');
    }
    if (current.length > want) {
      const cost = (p: KObject) => Number(p.metadata.annotations?.['controller.kubernetes.io/pod-deletion-cost'] ?? 0);
      const order = [...current].sort((a, b) => cost(a) - cost(b) || Number(isReady(a)) - Number(isReady(b)) ||
        (b.metadata.creationTimestamp ?? '').localeCompare(a.metadata.creationTimestamp ?? '') ||
        Number(b.metadata.resourceVersion) - Number(a.metadata.resourceVersion));
      for (const p of order.slice(0, current.length - want)) this.deletePod(p);
    }
    // old template's pods go once the new ones are all ready (or at once when scaling to zero)
    const readyNew = current.filter(isReady).length;
    if (old.length && (readyNew >= want || want === 0)) for (const p of old) this.deletePod(p);
    const pods = this.store.list(POD, ns).filter((p) => p.metadata.ownerReferences?.[0]?.uid.startsWith(`${d.metadata.uid}/`));
    const ready = pods.filter(isReady).length;
    const status = {
      observedGeneration: d.metadata.generation,
      replicas: pods.length,
      updatedReplicas: pods.filter((p) => p.metadata.labels?.['pod-template-hash'] === hash).length,
      readyReplicas: ready,
      availableReplicas: ready,
      ...(pods.length - ready > 0 ? { unavailableReplicas: pods.length - ready } : {}),
      conditions: [{ type: 'Available', status: ready >= want ? 'True' : 'False',
        reason: ready >= want ? 'MinimumReplicasAvailable' : 'MinimumReplicasUnavailable' }],
    };
    const cur = this.store.get(DEP, ns, d.metadata.name!);
    if (cur && JSON.stringify(cur.status) !== JSON.stringify(status))
      this.store.update(DEP, ns, d.metadata.name!, { ...cur, metadata: { ...cur.metadata, resourceVersion: undefined }, status }, 'deployments', 'status');
  }

  private deletePod(p: KObject): void {
    if (this.store.get(POD, p.metadata.namespace, p.metadata.name!)) this.store.remove(POD, p.metadata.namespace, p.metadata.name!, 'pods');
  }

  private schedule(): void {
    const nodes = this.store.list(NODE);
    const pods = this.store.list(POD);
    for (const p of pods.filter((x) => !x.spec?.nodeName)) {
      if (((p.spec?.schedulingGates ?? []) as Obj[]).length) {
        // gated: not a candidate for scheduling until every gate is removed
        const gated = [{ type: 'PodScheduled', status: 'False', reason: 'SchedulingGated',
          message: 'Scheduling is blocked due to non-empty scheduling gates' }];
        if (JSON.stringify(p.status?.conditions) !== JSON.stringify(gated)) this.setStatus(p, { ...p.status, phase: 'Pending', conditions: gated });
        continue;
      }
      const onNode = (n: KObject) => pods.filter((x) => x.spec?.nodeName === n.metadata.name);
      const why = nodes.map((n) => unfit(p, n, onNode(n)));
      const fits = nodes.filter((_, i) => !why[i]).sort((a, b) => onNode(a).length - onNode(b).length);
      if (!fits.length) {
        const msg = `0/${nodes.length} nodes are available: ${[...new Set(why)].join(', ')}.`;
        const conds = [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message: msg }];
        if (JSON.stringify(p.status?.conditions) !== JSON.stringify(conds)) this.setStatus(p, { ...p.status, phase: 'Pending', conditions: conds });
        continue;
      }
      const node = fits[0];
      p.spec!.nodeName = node.metadata.name;
      const bound = this.store.update(POD, p.metadata.namespace, p.metadata.name!, { ...p, metadata: { ...p.metadata, resourceVersion: undefined } }, 'pods');
      pods[pods.indexOf(p)] = bound;
      void this.runPod(bound, node);
    }
  }

  private setStatus(p: KObject, status: Obj): KObject | undefined {
    const cur = this.store.get(POD, p.metadata.namespace, p.metadata.name!);
    if (!cur || cur.metadata.uid !== p.metadata.uid) return undefined;
    return this.store.update(POD, cur.metadata.namespace, cur.metadata.name!, { ...cur, metadata: { ...cur.metadata, resourceVersion: undefined }, status },
      'pods', 'status');
  }

  private setPodReady(p: KObject, ready: boolean): void {
    const conds = ((p.status?.conditions ?? []) as Obj[]).map((c) =>
      (c.type === 'Ready' || c.type === 'ContainersReady' ? { ...c, status: ready ? 'True' : 'False' } : c));
    const containerStatuses = ((p.status?.containerStatuses ?? []) as Obj[]).map((c) => ({ ...c, ready }));
    this.setStatus(p, { ...p.status, conditions: conds, ...(p.status?.containerStatuses ? { containerStatuses } : {}) });
  }

  private async runPod(pod: KObject, node: KObject): Promise<void> {
    const uid = pod.metadata.uid!;
    this.running.set(uid, 'starting');
    const log = (line: string) => this.kube.appendLog(pod.metadata.namespace!, pod.metadata.name!, line);
    let run: RunningPod;
    try {
      run = this.opts.runtime ? await this.opts.runtime(pod,
        log) : { podIP: `10.244.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250) + 2}`, stop: async () => undefined };
    } catch (e) {
      log(String(e));
      this.setStatus(pod, { ...pod.status, phase: 'Failed', reason: 'StartError', message: String(e) });
      return;
    }
    if (this.running.get(uid) !== 'starting' || this.stopped) return void run.stop();
    this.running.set(uid, run);
    void run.exited?.then((code) => this.onExit(pod, run, code));
    // a real process is Ready once its readiness probe answers, as the kubelet has it (a busy
    // machine starts a server later than any fixed delay); Running before that
    const probe = this.opts.runtime ? readinessGet(pod) : undefined;
    this.later(() => {
      const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
      const containers = (pod.spec?.containers ?? []) as Obj[];
      this.setStatus(pod, {
        phase: 'Running',
        podIP: run.podIP,
        podIPs: [{ ip: run.podIP }],
        hostIP: ((node.status?.addresses ?? []) as Obj[])[0]?.address,
        startTime: now,
        qosClass: 'Burstable',
        conditions: ['PodScheduled', 'Initialized', 'ContainersReady', 'Ready'].map((type) =>
          ({ type, status: probe && type.endsWith('Ready') ? 'False' : 'True', lastTransitionTime: now })),
        containerStatuses: containers.map((c) =>
          ({ name: c.name, image: c.image, imageID: `fake://${String(c.image)}`, containerID: `fake://${uid.slice(0, 12)}`, ready: !probe, started: true,
            restartCount: 0, state: { running: { startedAt: now } }, resources: c.resources })),
      });
      if (probe) {
        void this.probeUntilReady(`http://${run.podIP}:${probe.port}${probe.path}`, uid).then((ok) => {
          const cur = ok ? this.store.get(POD, pod.metadata.namespace, pod.metadata.name!) : undefined;
          if (cur && cur.metadata.uid === uid) this.setPodReady(cur, true);
        });
      }
    }, this.opts.readyDelayMs ?? 200);
  }

  /**
   * A container that exits by itself: with restartPolicy Never (or OnFailure and code 0) the pod
   * ends Succeeded / Failed with the container's terminated state; its log stream ends. With
   * Always (Deployments) the kubelet would restart it; here it is marked Failed and the controller
   * sees it not ready (enough for the provider's reactions under test).
   */
  private onExit(pod: KObject, run: RunningPod, code: number | null): void {
    if (this.running.get(pod.metadata.uid!) !== run || this.stopped) return; // stopped on purpose
    this.running.delete(pod.metadata.uid!);
    const cur = this.store.get(POD, pod.metadata.namespace, pod.metadata.name!);
    if (!cur || cur.metadata.uid !== pod.metadata.uid) return;
    const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    const ok = code === 0;
    const statuses = ((cur.status?.containerStatuses ?? []) as Obj[]).map((c) =>
      ({ ...c, ready: false, started: false, state: { terminated: { exitCode: code ?? 137, reason: ok ? 'Completed' : 'Error', finishedAt: now } } }));
    const conds = ((cur.status?.conditions ?? []) as Obj[]).map((c) => (c.type === 'Ready' || c.type === 'ContainersReady' ? { ...c, status: 'False' } : c));
    this.setStatus(cur, { ...cur.status, phase: ok ? 'Succeeded' : 'Failed', conditions: conds, containerStatuses: statuses });
    this.kube.endLogs(`${pod.metadata.namespace}/${pod.metadata.name}`);
  }

  /** The kubelet's side of an in-place resize: apply it and report the containers' new resources. */
  private async maybeResize(pod: KObject): Promise<void> {
    const run = this.running.get(pod.metadata.uid!);
    const statuses = (pod.status?.containerStatuses ?? []) as Obj[];
    const containers = (pod.spec?.containers ?? []) as Obj[];
    if (!run || run === 'starting' || !statuses.length) return;
    if (containers.every((c, i) => JSON.stringify(c.resources) === JSON.stringify(statuses[i]?.resources))) return;
    await run.resize?.(containers[0]?.resources);
    this.setStatus(pod, { ...pod.status, containerStatuses: statuses.map((s, i) => ({ ...s, resources: containers[i]?.resources })) });
  }
}
