/**
 * `mlfaas node-agent` (a DaemonSet on Kubernetes): what the platform needs from each node that the
 * kubelet does not do.
 * - Capacity: the node's CPUs and GPUs (nvidia-smi), at `/capacity` and in `/metrics`.
 * - The limiter library for fractional-GPU pods: copied to the hostPath the pods mount
 *   (`NODE_LIB_DIR`, LD_PRELOAD there).
 * - Quotas: it watches the pods on its node and applies each one's `mlfaas.io/quota` to the pod's
 *   own cgroup (CFS quota = quota × the function's CPU limit, or × the node's cores without one).
 *   Where the API server resized the pod in place the kubelet wrote the same value; where it cannot
 *   (Kubernetes < 1.33) this write is the enforcement. Fractional-GPU pods' processes get the same
 *   quota on tokend's GPU window (the limiter gates their kernel launches on it).
 * - Usage: each pod's CPU time from its cgroup, in `/metrics`.
 * - Models by URI: keeps the node's model cache within its size (node-model-cache.ts).
 * The pod cgroup is found as the kubelet makes it: `pod<uid>` (cgroupfs driver) or
 * `*-pod<uid_with_underscores>.slice` (systemd driver) under the kubepods hierarchy.
 */
import { CoreV1Api, type KubeConfig, makeInformer, type V1Pod } from '@kubernetes/client-node';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { Counter, Gauge, Registry } from 'prom-client';
import { cpuCores } from '../../../node-runtime/cgroups';
import { CFS_PERIOD_US, cpuFiles, cpuMaxLine, usageUs } from '../../../node-runtime/cpu-values';
import { CPU_BASE_ANNOTATION, FN_LABEL, GPU_DEVICE_ANNOTATION, GPU_SHARE_ANNOTATION, SM_PERCENT_ANNOTATION } from './manifests';

/** The GPU a fractional-GPU pod's quota is on (tokend's `gpuN`; default 0): the placement writes it (manifests.ts). */
export { GPU_DEVICE_ANNOTATION } from './manifests';
import { QUOTA_ANNOTATION } from './pods';
import { NodeModelCache, type NodeModelCacheOptions } from './node-model-cache';

export interface NodeAgentOptions {
  nodeName: string;
  /** The cpu controller's hierarchy root holding the kubelet's groups (v1: /sys/fs/cgroup/cpu; v2: /sys/fs/cgroup). */
  cpuCgroupRoot: string;
  /** The cpuacct hierarchy root (v1; often the same directory as cpu). */
  cpuacctRoot?: string;
  /** GPUs found on the node. */
  gpus: number;
  /** Sets a process's quota on tokend's window of GPU `device` (absent: tokend not running on this node). */
  gpuQuota?: (pid: number, device: number, quota: number) => Promise<void>;
  /** This node runs the MPS control daemon: a fractional-GPU pod's container runs at its `mlfaas.io/sm-percent`. */
  mps?: boolean;
  /** A process's environment (default: /proc/<pid>/environ; the DaemonSet runs with hostPID). */
  environOf?: (pid: number) => Record<string, string>;
  /** The limiter library to install, and where pods mount it from. */
  limiter?: { from: string; to: string };
  /** The node's model cache (hostPath): LRU eviction within its size, never a version a pod on this node mounts. */
  modelCache?: NodeModelCacheOptions;
  port?: number;
  log?: (line: string) => void;
}

/** The directory of a pod's cgroup under `root`, searched as deep as the kubelet nests it (4). */
export function findPodCgroup(root: string, uid: string, depth = 4): string | undefined {
  const names = [`pod${uid}`, `pod${uid.replace(/-/g, '_')}`];
  const walk = (dir: string, d: number): string | undefined => {
    let entries: string[];
    try {
      entries = readdirSync(dir, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name);
    } catch {
      return undefined;
    }
    const hit = entries.find((e) => names.some((n) => e === n || e.endsWith(`-${n}.slice`)));
    if (hit) return join(dir, hit);
    if (d === 0) return undefined;
    for (const e of entries) {
      const r = walk(join(dir, e), d - 1);
      if (r) return r;
    }
    return undefined;
  };
  return walk(root, depth);
}

/** CFS quota in µs per 100 ms period for a quota of the function's CPU limit (or of the node's cores). */
export function cfsQuotaFor(quota: number, cpuBase: string | undefined, nodeCores: number): number {
  return Math.max(1000, Math.round(quota * (cpuBase ? cpuCores(cpuBase) : nodeCores) * CFS_PERIOD_US)); // the kernel's minimum is 1 ms
}

export class NodeAgent {
  private readonly core: CoreV1Api;
  private readonly metrics = new Registry();
  private readonly quotaGauge = new Gauge({ name: 'mlfaas_node_replica_quota', help: 'Time quota applied to a replica on this node',
    labelNames: ['namespace', 'pod', 'function'], registers: [this.metrics] });
  private readonly cpuGauge = new Gauge({ name: 'mlfaas_node_replica_cpu_seconds', help: 'CPU time a replica on this node used (its cgroup)',
    labelNames: ['namespace', 'pod', 'function'], registers: [this.metrics] });
  private readonly shareRestarts = new Counter({ name: 'mlfaas_node_sm_share_restarts_total',
    help: 'Fractional-GPU containers this node agent restarted to run at a new SM share (cold starts)', labelNames: ['namespace', 'function'],
    registers: [this.metrics] });
  private readonly capacityGauge = new Gauge({ name: 'mlfaas_node_capacity', help: 'This node\'s devices', labelNames: ['resource'],
    registers: [this.metrics] });
  private readonly pods = new Map<string, V1Pod>();
  private readonly applied = new Map<string, string>();
  /** Each pod's cgroup folder by hierarchy root, found once (a walk of the kubelet's tree). */
  private readonly groups = new Map<string, string>();
  private informer?: ReturnType<typeof makeInformer<V1Pod>>;
  private server?: Server;
  private stopped = false;
  /** Present with `opts.modelCache`. */
  modelCache?: NodeModelCache;
  url = '';

  constructor(
    private readonly kc: KubeConfig,
    private readonly opts: NodeAgentOptions,
  ) {
    this.core = kc.makeApiClient(CoreV1Api);
  }

  capacity(): { node: string; cpus: number; gpus: number } {
    return { node: this.opts.nodeName, cpus: cpus().length, gpus: this.opts.gpus };
  }

  async start(): Promise<void> {
    const cap = this.capacity();
    this.capacityGauge.set({ resource: 'cpu' }, cap.cpus);
    this.capacityGauge.set({ resource: 'nvidia.com/gpu' }, cap.gpus);
    if (this.opts.limiter && existsSync(this.opts.limiter.from)) {
      mkdirSync(this.opts.limiter.to, { recursive: true });
      copyFileSync(this.opts.limiter.from, join(this.opts.limiter.to, 'libmlfaas_limiter.so'));
    }
    // client-node's informer takes no field selector: pods of every node are listed, ours kept
    const inf = makeInformer(this.kc, '/api/v1/pods', () =>
      this.core.listPodForAllNamespaces({ labelSelector: FN_LABEL, fieldSelector: `spec.nodeName=${this.opts.nodeName}` }), FN_LABEL);
    const seen = (p: V1Pod) => {
      if (p.spec?.nodeName !== this.opts.nodeName) return;
      this.pods.set(p.metadata!.uid!, p);
      void this.apply(p).catch((e: Error) => this.opts.log?.(`node-agent: ${p.metadata?.name}: ${e.message}`));
    };
    inf.on('add', seen);
    inf.on('update', seen);
    inf.on('delete', (p) => {
      this.pods.delete(p.metadata!.uid!);
      this.applied.delete(p.metadata!.uid!);
      for (const k of [...this.groups.keys()]) if (k.endsWith(`|${p.metadata!.uid}`)) this.groups.delete(k);
      this.quotaGauge.remove({ namespace: p.metadata!.namespace!, pod: p.metadata!.name!, function: p.metadata!.labels![FN_LABEL] });
      this.modelCache?.sweepSoon();
    });
    inf.on('error', () => {
      if (!this.stopped) setTimeout(() => void (this.stopped || inf.start().catch(() => undefined)), 1000).unref();
    });
    this.informer = inf;
    await inf.start();
    if (this.opts.modelCache) {
      this.modelCache = new NodeModelCache(this.core, this.opts.nodeName, this.opts.modelCache, this.metrics, this.opts.log);
      this.modelCache.start();
    }
    this.server = createServer((req, res) => void this.serve(req.url ?? '/', res));
    await new Promise<void>((r) => this.server!.listen(this.opts.port ?? 0, '0.0.0.0', r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  private async serve(path: string, res: import('node:http').ServerResponse): Promise<void> {
    if (path === '/metrics') {
      this.sampleUsage();
      res.writeHead(200, { 'content-type': this.metrics.contentType }).end(await this.metrics.metrics());
    } else if (path === '/capacity') res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(this.capacity()));
    else if (path === '/healthz') res.writeHead(200).end('ok');
    else res.writeHead(404).end();
  }

  private labels(p: V1Pod) {
    return { namespace: p.metadata!.namespace!, pod: p.metadata!.name!, function: p.metadata!.labels![FN_LABEL] };
  }

  /** Applies a pod's quota to its cgroup (and its processes' GPU window), once per change. */
  async apply(p: V1Pod): Promise<void> {
    const a = p.metadata?.annotations ?? {};
    const quota = Number(a[QUOTA_ANNOTATION] ?? 1);
    if (!(quota > 0 && quota <= 1)) return;
    const key = `${quota}|${a[CPU_BASE_ANNOTATION] ?? ''}|${a[SM_PERCENT_ANNOTATION] ?? ''}`;
    if (this.applied.get(p.metadata!.uid!) === key) return;
    const dir = this.group(this.opts.cpuCgroupRoot, p);
    if (!dir) return; // not started yet: the next status update applies it
    if (this.opts.mps && a[GPU_SHARE_ANNOTATION] && a[SM_PERCENT_ANNOTATION] && this.restartAtShare(p, dir, a[SM_PERCENT_ANNOTATION])) return;
    const us = cfsQuotaFor(quota, a[CPU_BASE_ANNOTATION], cpus().length);
    const f = cpuFiles(versionOf(dir));
    if (f.period) writeFileSync(join(dir, f.period), String(CFS_PERIOD_US));
    writeFileSync(join(dir, f.quota), f.period ? String(us) : cpuMaxLine(us));
    if (a[GPU_SHARE_ANNOTATION] && this.opts.gpuQuota) {
      const pids = podPids(dir);
      // its processes are not there yet: the pod's next update (Ready) applies the GPU quota
      if (pids.length === 0) return;
      for (const pid of pids) await this.opts.gpuQuota(pid, Number(a[GPU_DEVICE_ANNOTATION] ?? 0), quota);
    }
    this.applied.set(p.metadata!.uid!, key);
    this.quotaGauge.set(this.labels(p), quota);
    this.opts.log?.(`node-agent: ${p.metadata!.namespace}/${p.metadata!.name} quota ${quota}`);
  }

  /**
   * An SM share is read by CUDA once, at a process's start: a container running at another
   * percentage than its pod's annotation is stopped (SIGTERM to the pod's processes), and the
   * kubelet starts it again, its `CUDA_MPS_ACTIVE_THREAD_PERCENTAGE` read from the annotation anew
   * (the downward API). In place: the pod serves nothing meanwhile (a cold start, counted). True
   * when it restarted the container (its quota is applied when it is back).
   */
  private restartAtShare(p: V1Pod, dir: string, want: string): boolean {
    const environ = this.opts.environOf ?? procEnviron;
    const pids = podPids(dir);
    const stale = pids.filter((pid) => {
      const at = environ(pid).CUDA_MPS_ACTIVE_THREAD_PERCENTAGE;
      return at !== undefined && at !== want;
    });
    if (stale.length === 0) return false;
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGTERM');
      } catch {
        // gone meanwhile
      }
    }
    this.shareRestarts.inc({ namespace: p.metadata!.namespace!, function: p.metadata!.labels![FN_LABEL] });
    this.opts.log?.(`node-agent: ${p.metadata!.namespace}/${p.metadata!.name} runs at ` +
      `SM ${stale.map((pid) => environ(pid).CUDA_MPS_ACTIVE_THREAD_PERCENTAGE).join(',')} %, wanted ${want} %: container restarted`);
    return true;
  }

  /** Applies every pod's quota again (tokend restarted with no rules). */
  reapply(): void {
    this.applied.clear();
    for (const p of this.pods.values()) void this.apply(p).catch((e: Error) => this.opts.log?.(`node-agent: ${p.metadata?.name}: ${e.message}`));
  }

  private sampleUsage(): void {
    for (const p of this.pods.values()) {
      const dir = this.group(this.opts.cpuacctRoot ?? this.opts.cpuCgroupRoot, p);
      if (!dir) continue;
      const version = versionOf(dir);
      const file = join(dir, cpuFiles(version).usage);
      if (existsSync(file)) this.cpuGauge.set(this.labels(p), usageUs(version, readFileSync(file, 'utf8')) / 1e6);
    }
  }

  private group(root: string, p: V1Pod): string | undefined {
    const key = `${root}|${p.metadata!.uid}`;
    let dir = this.groups.get(key);
    if (!dir) {
      dir = findPodCgroup(root, p.metadata!.uid!);
      if (dir) this.groups.set(key, dir);
    }
    return dir;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.modelCache?.stop();
    await this.informer?.stop().catch(() => undefined);
    await new Promise((r) => (this.server ? this.server.close(r) : r(undefined)));
  }
}

/** A cgroup folder's version: v2 groups have `cpu.max`, v1 cpu groups `cpu.cfs_quota_us`. */
const versionOf = (dir: string): 1 | 2 => (existsSync(join(dir, 'cpu.max')) ? 2 : 1);

/** Every process in a pod's cgroup (its containers' groups nest under it). */
export function podPids(dir: string): number[] {
  const out: number[] = [];
  const walk = (d: string) => {
    try {
      for (const l of readFileSync(join(d, 'cgroup.procs'), 'utf8').split('\n')) if (l.trim()) out.push(Number(l));
      for (const e of readdirSync(d, { withFileTypes: true })) if (e.isDirectory()) walk(join(d, e.name));
    } catch {
      // gone meanwhile
    }
  };
  walk(dir);
  return out;
}

/** A process's environment from /proc (empty when it is gone or unreadable). */
export function procEnviron(pid: number): Record<string, string> {
  try {
    const out: Record<string, string> = {};
    for (const kv of readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0')) {
      const i = kv.indexOf('=');
      if (i > 0) out[kv.slice(0, i)] = kv.slice(i + 1);
    }
    return out;
  } catch {
    return {};
  }
}
