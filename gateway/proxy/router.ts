import { functionNotFound } from '../errors';
import { FunctionRef, refKey } from '../lib/names';
import { FunctionProvider, FunctionStatus } from '../providers/function-provider';
import { parseMlSpec } from '../registry/function-spec';
import { modelVersionOf } from '../registry/model-uri-spec';
import { FunctionTimeouts, parseFunctionTimeouts } from '../registry/timeouts-spec';
import { FunctionState } from './function-state';

export interface RouterOptions {
  queueDepth: number;
  replicaConcurrency: number;
  /** Safety-net refresh of every cached function, ms (changes normally arrive by pub/sub). */
  refreshMs?: number;
}

/** Per-replica concurrency for a function: `mlfaas.max_inflight`, else env `max_inflight`, else the default. */
export function maxInflightOf(s: FunctionStatus, def: number): number {
  try {
    const ml = parseMlSpec(s.labels ?? {}, s.annotations ?? {});
    if (ml.maxInflight) return ml.maxInflight;
  } catch {
    // validated at deploy; fall through
  }
  const env = Number(s.envVars?.max_inflight);
  return Number.isInteger(env) && env > 0 ? env : def;
}

/**
 * The model version a function's replicas report on /v2: MLFAAS_MODEL_VERSION as the agent sets
 * it (from the model URI's sha256), else the function's own, else '1'.
 */
export function servedModelVersion(s: FunctionStatus): string {
  try {
    const sha = parseMlSpec(s.labels ?? {}, s.annotations ?? {}).modelSource?.sha256;
    return sha ? modelVersionOf(sha) : s.envVars?.MLFAAS_MODEL_VERSION || '1';
  } catch {
    return s.envVars?.MLFAAS_MODEL_VERSION || '1';
  }
}

/** The function's own timeouts from its env (validated at deploy; a stored spec that no longer parses gets none). */
export function timeoutsOf(s: FunctionStatus): FunctionTimeouts {
  try {
    return parseFunctionTimeouts(s.envVars);
  } catch {
    return {};
  }
}

/**
 * This gateway's view of every function it has routed to: kept current by the provider's change
 * feed, so the request path reads memory only.
 */
export class FunctionRouter {
  private fns = new Map<string, FunctionState>();
  private loading = new Map<string, Promise<FunctionState | undefined>>();
  private unwatch?: () => void;
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly provider: FunctionProvider,
    private readonly opts: RouterOptions,
  ) {}

  async start(): Promise<void> {
    this.unwatch = await this.provider.watch((c) => {
      if (this.fns.has(c.key)) void this.refresh(c.key);
    });
    this.timer = setInterval(() => {
      for (const k of this.fns.keys()) void this.refresh(k);
    }, this.opts.refreshMs ?? 2000);
    this.timer.unref();
  }

  /** Cached state, loading it on first use; undefined when the function does not exist. */
  state(ref: FunctionRef): FunctionState | Promise<FunctionState | undefined> | undefined {
    const key = refKey(ref);
    const s = this.fns.get(key);
    if (s) return s;
    let p = this.loading.get(key);
    if (!p) {
      p = this.load(ref).finally(() => this.loading.delete(key));
      this.loading.set(key, p);
    }
    return p;
  }

  private async load(ref: FunctionRef): Promise<FunctionState | undefined> {
    const status = await this.provider.get(ref);
    if (!status) return undefined;
    const key = refKey(ref);
    const eps = await this.provider.endpoints(ref);
    // published only once complete: a half-loaded state (no replicas, desired 0) would wake the function
    let s = this.fns.get(key);
    if (!s) {
      s = new FunctionState(ref, maxInflightOf(status, this.opts.replicaConcurrency), this.opts.queueDepth);
      s.kind = status.kind;
      s.timeouts = timeoutsOf(status);
      s.modelVersion = servedModelVersion(status);
      s.setReplicas(eps, status.replicas);
      this.fns.set(key, s);
    }
    return s;
  }

  private async refresh(key: string): Promise<void> {
    const s = this.fns.get(key);
    if (!s) return;
    const status = await this.provider.get(s.ref).catch(() => null);
    if (status === null) return; // store unreachable: keep routing with what we know
    if (!status) {
      this.fns.delete(key);
      s.rejectAll(functionNotFound(s.ref.name, s.ref.namespace));
      return;
    }
    s.maxInflight = maxInflightOf(status, this.opts.replicaConcurrency);
    s.kind = status.kind;
    s.timeouts = timeoutsOf(status);
    s.modelVersion = servedModelVersion(status);
    const eps = await this.provider.endpoints(s.ref).catch(() => null);
    if (eps) s.setReplicas(eps, status.replicas);
  }

  /** Every function this gateway routes, for metrics. */
  all(): Iterable<FunctionState> {
    return this.fns.values();
  }

  close(): void {
    this.unwatch?.();
    if (this.timer) clearInterval(this.timer);
  }
}
