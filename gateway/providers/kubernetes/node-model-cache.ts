/**
 * The node agent's half of models by URI on Kubernetes (issue 25, part 4): it keeps the node's
 * hostPath model cache (NODE_MODEL_CACHE_DIR, one directory per sha256, filled by the pods' fetch
 * init containers, model-init.ts) within MLFAAS_MODEL_CACHE_BYTES. The same LRU policy as the
 * local agent's cache (node-runtime/model-cache-policy.ts, through model-cache-dir.ts); what is in
 * use comes from the API server: every version a pod on this node mounts, listed afresh at each
 * sweep. When the list fails nothing is evicted (what is in use is then unknown).
 *
 * A pod bound to the node after the list and starting on an old version could lose its directory
 * to the sweep; a version used (fetched, hit, or seen mounted) within `minIdleMs` is therefore
 * never evicted, and the init container that lost it fails and is rerun by the kubelet, fetching
 * it again.
 */
import type { CoreV1Api, V1Pod } from '@kubernetes/client-node';
import { Counter, Gauge, type Registry } from 'prom-client';
import { sweepCacheDir, touchVersion } from '../../../node-runtime/model-cache-dir';
import type { EvictionPlan } from '../../../node-runtime/model-cache-policy';
import { apiCode } from './api-errors';
import { modelVersionsMounted, NODE_MODEL_CACHE_DIR } from './model-init';

export interface NodeModelCacheOptions {
  /** The cache directory as this process sees it (the DaemonSet mounts the hostPath at the same path). */
  dir: string;
  /** `MLFAAS_MODEL_CACHE_BYTES`. */
  maxBytes: number;
  /** The hostPath directory the pods mount versions from (default NODE_MODEL_CACHE_DIR). */
  hostDir?: string;
  /** Sweep period (default 60 s); a pod leaving the node also sweeps, `settleMs` later. */
  sweepMs?: number;
  /** Default 1 s. */
  settleMs?: number;
  /** A version used this recently is not evicted (default 120 s). */
  minIdleMs?: number;
}

export class NodeModelCache {
  private timer?: NodeJS.Timeout;
  private soon?: NodeJS.Timeout;
  private running?: Promise<EvictionPlan | undefined>;
  private readonly bytes: Gauge;
  private readonly evictions: Counter;

  constructor(
    private readonly core: CoreV1Api,
    private readonly nodeName: string,
    private readonly opts: NodeModelCacheOptions,
    metrics: Registry,
    private readonly log?: (line: string) => void,
  ) {
    this.bytes = new Gauge({ name: 'mlfaas_node_model_cache_bytes', help: 'Bytes in this node\'s model cache after its last sweep', registers: [metrics] });
    this.evictions = new Counter({ name: 'mlfaas_node_model_evictions_total', help: 'Model versions evicted from this node\'s cache (LRU, not in use)',
      registers: [metrics] });
  }

  start(): void {
    this.timer = setInterval(() => void this.sweep(), this.opts.sweepMs ?? 60_000);
    this.timer.unref();
    this.sweepSoon();
  }

  /** A pod left the node (its version may be idle now): sweep once things settle. */
  sweepSoon(): void {
    if (this.soon || !this.timer) return;
    this.soon = setTimeout(() => {
      this.soon = undefined;
      void this.sweep();
    }, this.opts.settleMs ?? 1000);
    this.soon.unref();
  }

  /** Lists the node's pods, marks their versions used now, evicts by the shared LRU policy. One sweep at a time. */
  sweep(): Promise<EvictionPlan | undefined> {
    if (this.running) return this.running;
    this.running = this.once().finally(() => (this.running = undefined));
    return this.running;
  }

  private async once(): Promise<EvictionPlan | undefined> {
    let pods: V1Pod[];
    try {
      pods = (await this.core.listPodForAllNamespaces({ fieldSelector: `spec.nodeName=${this.nodeName}` })).items;
    } catch (e) {
      const why = apiCode(e) ? `HTTP ${apiCode(e)}` : (e as Error).message.split('\n')[0];
      this.log?.(`node-agent: model cache: cannot list this node's pods (${why}); nothing evicted`);
      return undefined;
    }
    const mounted = modelVersionsMounted(pods, this.opts.hostDir ?? NODE_MODEL_CACHE_DIR);
    const now = Date.now();
    for (const sha of mounted) touchVersion(this.opts.dir, sha, new Date(now));
    const plan = sweepCacheDir(this.opts.dir, this.opts.maxBytes, (sha) => mounted.has(sha), { now, minIdleMs: this.opts.minIdleMs ?? 120_000 },
      (l) => this.log?.(`node-agent: ${l}`));
    this.evictions.inc(plan.evict.length);
    this.bytes.set(plan.keptBytes);
    return plan;
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    clearTimeout(this.soon);
    this.timer = undefined;
    await this.running;
  }
}
