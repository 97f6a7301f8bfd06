import type { ChangeListener } from '../registry/change-feed';
import type { FunctionSpec } from '../registry/function-spec';
import type { ReplicaInfo } from '../registry/registry';
import type { FunctionRef } from '../lib/names';
import type { CapabilityProfile } from './capability-profile';

/** `/system/info`'s provider block (OpenFaaS `ProviderInfo`). */
export interface ProviderInfo {
  provider: string;
  orchestration: string;
  version: { release: string; sha: string };
}

/** A deployed function as `/system/functions` returns it (OpenFaaS `FunctionStatus`, minus invocations). */
export interface FunctionStatus {
  name: string;
  image: string;
  namespace: string;
  envProcess?: string;
  envVars?: Record<string, string>;
  constraints?: string[];
  secrets?: string[];
  labels: Record<string, string>;
  annotations: Record<string, string>;
  limits?: { memory?: string; cpu?: string };
  requests?: { memory?: string; cpu?: string };
  readOnlyRootFilesystem?: boolean;
  /** Desired replicas. */
  replicas: number;
  /** Replicas passing readiness. */
  availableReplicas: number;
  /** RFC3339 */
  createdAt: string;
  /** `inference`, `training` or `classic` (fork-per-request watchdog). */
  kind: string;
}

/**
 * What a provider's nodes actually hold a replica to, per dimension (the policy plans only over
 * enforced ones). `spatial`: which cores / SM share it may use; `temporal`: how much time of them;
 * `memory`: its memory limit. `tokend` is voluntary: only a runtime that asks for tokens obeys it.
 */
export interface Enforcement {
  /** CPU replicas: their cores (a cpuset). */
  spatial: 'cpuset' | 'none';
  /** CPU replicas: their time quota (CFS bandwidth, or tokend's voluntary CPU gate). */
  temporal: 'cfs' | 'tokend' | 'none';
  /** CPU and GPU replicas: host memory (the replica's memory cgroup). */
  memory: 'cgroup' | 'none';
  /** GPU replicas, on a node with GPUs (absent: no GPU replica runs here). */
  gpu?: GpuEnforcement;
  /** One line for people: the mechanism, and the fallback when there is one. */
  summary: string;
}

/**
 * What a GPU replica is held to, per dimension. `smShare`: its SM share
 * (`CUDA_MPS_ACTIVE_THREAD_PERCENTAGE` under the node's MPS control daemon), fixed at its start (a
 * new share is a replacement replica); `timeQuota`: its share of its GPU's time (the LD_PRELOAD
 * limiter against tokend's window), changed live; `memory`: device memory (never capped yet).
 */
export interface GpuEnforcement {
  smShare: 'mps' | 'none';
  timeQuota: 'limiter' | 'none';
  memory: 'none';
  /** One line: what is enforced, and why a dimension is not. */
  summary: string;
}

export interface LogLine {
  name: string;
  namespace: string;
  instance: string;
  /** RFC3339 with nanoseconds as OpenFaaS prints them. */
  timestamp: string;
  text: string;
}

export interface LogQuery {
  /** Last N lines; undefined or < 0 = all kept lines. */
  tail?: number;
  since?: Date;
  follow: boolean;
  signal: AbortSignal;
}

export interface Secret {
  name: string;
  namespace: string;
  value?: string;
  /** base64 raw bytes (faas-cli `--from-file`) */
  rawValue?: string;
}

export interface SecretStore {
  list(namespace: string): Promise<Array<{ name: string; namespace: string }>>;
  /** Fails with Conflict if it exists. */
  create(s: Secret): Promise<void>;
  /** Fails with NotFound if absent. */
  update(s: Secret): Promise<void>;
  /** Fails with NotFound if absent. */
  remove(name: string, namespace: string): Promise<void>;
}

/**
 * The whole backend contract, like OpenFaaS faas-provider's handler set. The gateway never knows
 * which backend runs; `test/contract/describe-provider.ts` runs one suite against each.
 */
export interface FunctionProvider {
  info(): ProviderInfo;
  /** What this provider's nodes enforce on each replica (shown in `/system/info`). */
  enforcement(): Enforcement;
  /**
   * Optional: the same, as the nodes declare it now, read from where they declare it (a local
   * agent in another process writes it to Redis). The live autoscaler plans over these dimensions.
   */
  declaredEnforcement?(): Promise<Enforcement>;
  /** New function; Conflict if it exists, ImageNotFound (400) if the image cannot be run. */
  deploy(spec: FunctionSpec): Promise<void>;
  /** Rolling update of an existing function; NotFound if absent. */
  update(spec: FunctionSpec): Promise<void>;
  /** NotFound if absent. Replicas drain and stop. */
  remove(ref: FunctionRef): Promise<void>;
  get(ref: FunctionRef): Promise<FunctionStatus | undefined>;
  list(namespace?: string): Promise<FunctionStatus[]>;
  /**
   * Desired replica count; NotFound if absent. Clamped by nothing: the caller applies min/max.
   * `remove` names replicas to stop first when scaling down (the autoscaler's choice).
   */
  scale(ref: FunctionRef, replicas: number, remove?: string[]): Promise<void>;
  /** Scale from zero: desired 0 → 1 atomically, anything else unchanged. */
  wake?(ref: FunctionRef): Promise<void>;
  /**
   * A replica's device time quota in (0, 1] (vertical scaling): its request, what it gets under
   * contention. `limit` in [quota, 1] (Dilu's <request, limit>): the most it may use, borrowing time
   * its neighbours on the device leave idle; absent = the quota (nothing lent). A provider that
   * cannot lend ignores `limit`.
   */
  setQuota(ref: FunctionRef, replicaId: string, quota: number, limit?: number): Promise<void>;
  /**
   * A GPU replica's SM share in (0, 1]. Fixed at a replica's start: where the share is enforced
   * (`enforcement().gpu.smShare === 'mps'`) a replica at another share is replaced by one at this
   * share (a cold start); the old one retires once the new one is ready. Optional: a provider
   * without it enforces no SM share.
   */
  setSmShare?(ref: FunctionRef, replicaId: string, smShare: number): Promise<void>;
  /** A replica's load-balancer weight (> 0). */
  setWeight(ref: FunctionRef, replicaId: string, weight: number): Promise<void>;
  /** The capability profile measured at deploy (throughput by batch size and quota), if any yet. */
  capability?(ref: FunctionRef): Promise<CapabilityProfile | undefined>;
  /** All replicas with their state; the balancer uses the `ready` ones. */
  endpoints(ref: FunctionRef): Promise<ReplicaInfo[]>;
  logs(ref: FunctionRef, q: LogQuery): AsyncIterable<LogLine>;
  namespaces(): Promise<string[]>;
  readonly secrets: SecretStore;
  /** Change notifications (spec, desired count, replica set) from any process on the same store. */
  watch(l: ChangeListener): Promise<() => void>;
  close(): Promise<void>;
}
