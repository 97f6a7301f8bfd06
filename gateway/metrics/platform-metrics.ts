import { Counter, Gauge, type Registry as PromRegistry } from 'prom-client';
import type { IncomingHttpHeaders } from 'node:http';

/** One routed function as the metrics see it (the router's `FunctionState`). */
export interface RoutedFunction {
  label: string;
  ref: { name: string; namespace: string };
  upstreams: readonly unknown[];
  inflight: number;
}

/** One replica as the provider lists it (`FunctionProvider.endpoints`). */
export interface ReplicaSample {
  id: string;
  state: string;
  quota: number;
  smShare?: number;
}

/** One training job as the job store lists it. */
export interface JobSample {
  id: string;
  function: string;
  namespace: string;
  state: string;
  workers: number;
  iterations: number;
  progress?: { step: number };
}

/** Where the scrape-time gauges read from; each is optional (absent: the series are not exported). */
export interface PlatformSources {
  functions(): Iterable<RoutedFunction>;
  replicas?(ref: { name: string; namespace: string }): Promise<readonly ReplicaSample[]>;
  jobs?(): Promise<readonly JobSample[]>;
  /** The fixed-cluster controller's accept rate in force for a function (`function_name`), 1: all admitted. */
  acceptRate?(functionName: string): number;
  /** A replica's CPU time and memory working set from its cgroup on this node (replica-usage.ts); undefined: not here. */
  usage?(replicaId: string): { cpuSeconds?: number; memoryBytes?: number } | undefined;
}

const TERMINAL = new Set(['completed', 'cancelled', 'failed']);

/**
 * `load()` shared by the gauges of one scrape: the registry calls every metric's collect at once,
 * so a call while one is in flight gets that one's promise (one provider or store read a scrape).
 */
function shared<T>(load: () => Promise<T>): () => Promise<T> {
  let pending: Promise<T> | undefined;
  return () => (pending ??= load().finally(() => (pending = undefined)));
}

/** Reads a numeric answer header (`x-batch-size`, `x-queue-ms`); NaN when absent or not a finite number >= 0. */
function headerNumber(h: IncomingHttpHeaders, name: string): number {
  const v = h[name];
  const n = Number(Array.isArray(v) ? v[0] : v);
  return typeof v === 'undefined' || !Number.isFinite(n) || n < 0 ? NaN : n;
}

/**
 * Triton's per-model counters, estimated from what the gateway sees of each answer of an
 * ml-inference replica: `X-Batch-Size` (the batch the request ran in) and `X-Queue-Ms` (its wait
 * in the replica's batcher). Each request is one inference; a batch of b requests is b answers
 * with `X-Batch-Size: b`, so adding 1/b per answer adds 1 per batch execution. Estimated here
 * rather than read from the replicas' `/_/stats` because every gateway then counts only the
 * answers it relayed: the sums over gateways stay right, where scraping the replicas from each
 * gateway would count every batch once per gateway. Answers without `X-Batch-Size` (classic
 * functions, errors before the batcher) count only in request_success/failure.
 */
export class InferenceMetrics {
  private readonly success: Counter<'function_name'>;
  private readonly failure: Counter<'function_name'>;
  private readonly count: Counter<'function_name'>;
  private readonly execCount: Counter<'function_name'>;
  private readonly queueUs: Counter<'function_name'>;
  private readonly seen = new Set<string>();

  constructor(registry: PromRegistry) {
    const counter = (name: string, help: string) => new Counter({ name, help, labelNames: ['function_name'], registers: [registry] });
    this.success = counter('nv_inference_request_success', 'Inference requests a replica answered with a status below 400 (Triton\'s name)');
    this.failure = counter('nv_inference_request_failure', 'Inference requests a replica answered with a status of 400 or more (Triton\'s name)');
    this.count = counter('nv_inference_count', 'Inferences performed: one per answered request carrying X-Batch-Size (Triton\'s name)');
    this.execCount = counter('nv_inference_exec_count', 'Batch executions, estimated as the sum of 1/X-Batch-Size over answers (Triton\'s name)');
    this.queueUs = counter('nv_inference_queue_duration_us',
      'Time requests waited in the replicas\' batch queue, microseconds, from X-Queue-Ms (Triton\'s name)');
  }

  /** Counts one answer a replica gave for `functionName`. */
  answered(functionName: string, status: number, headers: IncomingHttpHeaders): void {
    const labels = { function_name: functionName };
    this.seen.add(functionName);
    (status < 400 ? this.success : this.failure).inc(labels);
    const batch = headerNumber(headers, 'x-batch-size');
    if (!(batch >= 1)) return;
    this.count.inc(labels);
    this.execCount.inc(labels, 1 / batch);
    const queueMs = headerNumber(headers, 'x-queue-ms');
    if (queueMs >= 0) this.queueUs.inc(labels, Math.round(queueMs * 1000));
  }

  /** Drops the series of functions no longer routed. */
  forget(live: ReadonlySet<string>): void {
    for (const fn of this.seen) {
      if (live.has(fn)) continue;
      for (const c of [this.success, this.failure, this.count, this.execCount, this.queueUs]) c.remove({ function_name: fn });
      this.seen.delete(fn);
    }
  }
}

/** Training admission answers: `result` admitted or refused (the dry runs included). */
export function admissionCounter(registry: PromRegistry): Counter<'function_name' | 'result'> {
  return new Counter({
    name: 'mlfaas_training_admissions_total',
    help: 'Training job submissions by admission result (admitted or refused)',
    labelNames: ['function_name', 'result'],
    registers: [registry],
  });
}

/**
 * Scrape-time gauges read from the router, the provider's replica list and the job store:
 * OpenFaaS Pro's `gateway_service_ready_count`, the in-flight count, each replica's quota and SM
 * share, and each unfinished training job's progress and workers. A source that fails leaves
 * its gauges empty for that scrape (never a failed scrape, never a made-up value).
 */
export function registerScrapeGauges(registry: PromRegistry, sources: () => PlatformSources | undefined): void {
  new Gauge({
    name: 'gateway_service_ready_count',
    help: 'Replicas of each function passing readiness (OpenFaaS Pro\'s name)',
    labelNames: ['function_name'],
    registers: [registry],
    collect() {
      this.reset();
      for (const s of sources()?.functions() ?? []) this.set({ function_name: s.label }, s.upstreams.length);
    },
  });
  new Gauge({
    name: 'gateway_service_inflight',
    help: 'Requests to each function this gateway has sent to replicas and not yet answered',
    labelNames: ['function_name'],
    registers: [registry],
    collect() {
      this.reset();
      for (const s of sources()?.functions() ?? []) this.set({ function_name: s.label }, s.inflight);
    },
  });
  new Gauge({
    name: 'mlfaas_function_accept_rate',
    help: 'Share of each function\'s requests the fixed-cluster controller admits now (1: all; below 1 the rest get a 429)',
    labelNames: ['function_name'],
    registers: [registry],
    collect() {
      this.reset();
      const src = sources();
      if (!src?.acceptRate) return;
      for (const s of src.functions()) this.set({ function_name: s.label }, src.acceptRate(s.label));
    },
  });
  const replicas = shared(() => replicaSamples(sources()));
  new Counter({
    name: 'pod_cpu_usage_seconds_total',
    help: 'CPU time each replica on this node used, seconds, from its cgroup (OpenFaaS Pro\'s name; pod: the replica id)',
    labelNames: ['function_name', 'pod'],
    registers: [registry],
    async collect() {
      this.reset();
      const src = sources();
      for (const { fn, r } of await replicas()) {
        const s = src?.usage?.(r.id)?.cpuSeconds;
        if (s !== undefined) this.inc({ function_name: fn, pod: r.id }, s);
      }
    },
  });
  new Gauge({
    name: 'pod_memory_working_set_bytes',
    help: 'Memory working set of each replica on this node, bytes: its cgroup\'s usage less inactive file cache (OpenFaaS Pro\'s name)',
    labelNames: ['function_name', 'pod'],
    registers: [registry],
    async collect() {
      this.reset();
      const src = sources();
      for (const { fn, r } of await replicas()) {
        const b = src?.usage?.(r.id)?.memoryBytes;
        if (b !== undefined) this.set({ function_name: fn, pod: r.id }, b);
      }
    },
  });
  const jobs = shared(async () => {
    const src = sources();
    return src?.jobs ? (await src.jobs().catch(() => [] as JobSample[])).filter((j) => !TERMINAL.has(j.state)) : [];
  });
  new Gauge({
    name: 'mlfaas_replica_cpu_quota',
    help: 'Each replica\'s time quota, a fraction in (0, 1] of its device (vertical scaling)',
    labelNames: ['function_name', 'replica', 'state'],
    registers: [registry],
    async collect() {
      this.reset();
      for (const { fn, r } of await replicas()) this.set({ function_name: fn, replica: r.id, state: r.state }, r.quota);
    },
  });
  new Gauge({
    name: 'mlfaas_replica_sm_share',
    help: 'Each GPU replica\'s MPS SM share in (0, 1] (only replicas with one enforced)',
    labelNames: ['function_name', 'replica'],
    registers: [registry],
    async collect() {
      this.reset();
      for (const { fn, r } of await replicas()) if (r.smShare !== undefined) this.set({ function_name: fn, replica: r.id }, r.smShare);
    },
  });
  new Gauge({
    name: 'mlfaas_training_job_progress',
    help: 'Unfinished training jobs\' done fraction of their iterations, 0..1',
    labelNames: ['job_id', 'function'],
    registers: [registry],
    async collect() {
      this.reset();
      for (const j of await jobs()) this.set(jobLabels(j), j.iterations > 0 ? Math.min(1, (j.progress?.step ?? 0) / j.iterations) : 0);
    },
  });
  new Gauge({
    name: 'mlfaas_training_job_workers',
    help: 'Unfinished training jobs\' workers this round',
    labelNames: ['job_id', 'function'],
    registers: [registry],
    async collect() {
      this.reset();
      for (const j of await jobs()) this.set(jobLabels(j), j.workers);
    },
  });
}

// `job_id`, not `job`: Prometheus's scrape sets `job` (the scrape job), which would rename ours `exported_job`
const jobLabels = (j: JobSample) => ({ job_id: j.id, function: `${j.function}.${j.namespace}` });

/** Every routed function's replicas as the provider lists them (a function whose read fails: none). */
async function replicaSamples(src: PlatformSources | undefined): Promise<Array<{ fn: string; r: ReplicaSample }>> {
  if (!src?.replicas) return [];
  const fns = [...src.functions()];
  const lists = await Promise.all(fns.map((f) => src.replicas!(f.ref).catch(() => [] as readonly ReplicaSample[])));
  return fns.flatMap((f, i) => lists[i].map((r) => ({ fn: f.label, r })));
}
