import { Counter, Gauge, Histogram, Registry as PromRegistry, collectDefaultMetrics } from 'prom-client';
import type { FunctionRouter } from '../proxy/router';
import { admissionCounter, InferenceMetrics, type JobSample, type PlatformSources, registerScrapeGauges, type ReplicaSample } from './platform-metrics';

/**
 * Prometheus metrics with OpenFaaS's names (`gateway_function_invocation_total`,
 * `gateway_functions_seconds`, `gateway_service_count`) plus mlfaas's queue, in-flight and
 * replica gauges. `function_name` is `name.namespace`, as OpenFaaS labels it.
 */
export class GatewayMetrics {
  readonly registry = new PromRegistry();
  readonly invocations: Counter<'function_name' | 'code'>;
  readonly seconds: Histogram<'function_name' | 'code'>;
  /** Restarts of supervised platform components (`tokend`). */
  readonly componentRestarts: Counter<'component'>;
  /** Replicas the agent started cold beyond the desired count's own (`sm-share`: a new SM share). */
  readonly coldStarts: Counter<'function_name' | 'cause'>;
  /** Requests the fixed-cluster controller's accept rate dropped with a 429 (gateway/proxy/admission.ts). */
  readonly drops: Counter<'function_name'>;
  /** Invocations that ran past a timeout (issue 25): `phase` read (the body, 408) or exec (the answer or the queue, 504). */
  readonly timeouts: Counter<'function_name' | 'phase'>;
  /** Async invocations retried because the function answered a retry code (com.openfaas.retry.codes). */
  readonly asyncRetries: Counter<'function_name' | 'code'>;
  /** Triton's per-function counters from the answers' X-Batch-Size / X-Queue-Ms (platform-metrics.ts). */
  readonly inference: InferenceMetrics;
  /** Training admission answers (`result` admitted or refused). */
  readonly admissions: Counter<'function_name' | 'result'>;
  private router?: FunctionRouter;
  private sources?: Omit<PlatformSources, 'functions'>;

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: 'mlfaas_gateway_' });
    const self = this;
    this.invocations = new Counter({
      name: 'gateway_function_invocation_total',
      help: 'Function invocations by status code',
      labelNames: ['function_name', 'code'],
      registers: [this.registry],
      // once per scrape, before both series are read (the registry collects metrics in order)
      collect() {
        self.forgetRemoved();
      },
    });
    this.seconds = new Histogram({
      name: 'gateway_functions_seconds',
      help: 'Function time taken, seconds',
      labelNames: ['function_name', 'code'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers: [this.registry],
    });
    this.componentRestarts = new Counter({
      name: 'mlfaas_component_restarts_total',
      help: 'Restarts of platform components after they died',
      labelNames: ['component'],
      registers: [this.registry],
    });
    this.coldStarts = new Counter({
      name: 'mlfaas_replica_cold_starts_total',
      help: 'Replicas started cold to change what is fixed at a replica\'s start (cause sm-share: a GPU replica\'s MPS SM share)',
      labelNames: ['function_name', 'cause'],
      registers: [this.registry],
    });
    this.drops = new Counter({
      name: 'mlfaas_function_dropped_total',
      help: 'Requests dropped with a 429 by the fixed-cluster controller\'s accept rate (the cluster cannot carry them all)',
      labelNames: ['function_name'],
      registers: [this.registry],
    });
    this.timeouts = new Counter({
      name: 'mlfaas_function_timeouts_total',
      help: 'Invocations that ran past a timeout: phase read (request body, 408) or exec (queue wait or answer, 504)',
      labelNames: ['function_name', 'phase'],
      registers: [this.registry],
    });
    this.asyncRetries = new Counter({
      name: 'mlfaas_async_retries_total',
      help: 'Async invocations retried after the function answered one of its retry codes',
      labelNames: ['function_name', 'code'],
      registers: [this.registry],
    });
    this.inference = new InferenceMetrics(this.registry);
    this.admissions = admissionCounter(this.registry);
    registerScrapeGauges(this.registry, () => (self.router ? { ...self.sources, functions: () => self.router!.all() } : undefined));
    const each = (g: Gauge<string>, value: (s: ReturnType<FunctionRouter['all']> extends Iterable<infer T> ? T : never) => number) => {
      g.reset();
      for (const s of self.router?.all() ?? []) g.set({ function_name: `${s.ref.name}.${s.ref.namespace}` }, value(s));
    };
    new Gauge({
      name: 'gateway_service_count',
      help: 'Desired replicas of each function',
      labelNames: ['function_name'],
      registers: [this.registry],
      collect() {
        each(this, (s) => s.desired);
      },
    });
    new Gauge({
      name: 'mlfaas_function_queue_length',
      help: 'Requests waiting in this gateway for a replica slot',
      labelNames: ['function_name'],
      registers: [this.registry],
      collect() {
        each(this, (s) => s.queued);
      },
    });
    new Gauge({
      name: 'mlfaas_function_inflight',
      help: 'Requests this gateway has sent to replicas and not yet answered',
      labelNames: ['function_name'],
      registers: [this.registry],
      collect() {
        each(this, (s) => s.inflight);
      },
    });
    new Gauge({
      name: 'mlfaas_function_ready_replicas',
      help: 'Replicas passing readiness',
      labelNames: ['function_name'],
      registers: [this.registry],
      collect() {
        each(this, (s) => s.upstreams.length);
      },
    });
  }

  private readonly dropsSeen = new Set<string>();

  /** Label children by `function_name|code`: the cache of the hot path, and every invocation series there is. */
  private children = new Map<string, { functionName: string; code: string; count: { inc(): void }; time: { observe(v: number): void } }>();

  /** Counts one invocation; label children are cached per function and code (hot path). */
  record(functionName: string, code: number, seconds: number): void {
    const key = `${functionName}|${code}`;
    let c = this.children.get(key);
    if (!c) {
      const labels = { function_name: functionName, code: String(code) };
      c = { functionName, code: labels.code, count: this.invocations.labels(labels), time: this.seconds.labels(labels) };
      this.children.set(key, c);
    }
    c.count.inc();
    c.time.observe(seconds);
  }

  /** Counts one request dropped by the accept rate. */
  dropped(functionName: string): void {
    this.dropsSeen.add(functionName);
    this.drops.inc({ function_name: functionName });
  }

  /** Counts one invocation past its timeout. */
  timedOut(functionName: string, phase: 'read' | 'exec'): void {
    this.timeoutsSeen.add(functionName);
    this.timeouts.inc({ function_name: functionName, phase });
  }

  private readonly timeoutsSeen = new Set<string>();

  attach(router: FunctionRouter): void {
    this.router = router;
  }

  /** Where the per-replica and per-job gauges read from (the provider's replica list, the job store). */
  attachSources(sources: {
    replicas?(ref: { name: string; namespace: string }): Promise<readonly ReplicaSample[]>;
    jobs?(): Promise<readonly JobSample[]>;
    acceptRate?(functionName: string): number;
    usage?(replicaId: string): { cpuSeconds?: number; memoryBytes?: number } | undefined;
  }): void {
    this.sources = sources;
  }

  /**
   * Drops the invocation series of functions the router no longer routes (deleted: the router
   * forgets a function once the provider no longer has it), so `/metrics` does not keep them.
   * Runs at each scrape; a function deployed again starts from zero.
   */
  forgetRemoved(): void {
    if (!this.router) return;
    const live = new Set<string>();
    for (const s of this.router.all()) live.add(`${s.ref.name}.${s.ref.namespace}`);
    this.inference.forget(live);
    for (const fn of this.timeoutsSeen) {
      if (live.has(fn)) continue;
      for (const phase of ['read', 'exec']) this.timeouts.remove({ function_name: fn, phase });
      this.timeoutsSeen.delete(fn);
    }
    for (const fn of this.dropsSeen) {
      if (live.has(fn)) continue;
      this.drops.remove({ function_name: fn });
      this.dropsSeen.delete(fn);
    }
    for (const [key, c] of this.children) {
      if (live.has(c.functionName)) continue;
      const labels = { function_name: c.functionName, code: c.code };
      this.invocations.remove(labels);
      this.seconds.remove(labels);
      this.children.delete(key);
    }
  }
}
