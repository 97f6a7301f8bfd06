import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseAllowList } from './async/callback-policy';
import { memoryQuantityBytes } from './lib/quantity';
import { connectionFromEnv, type KubeConnection } from './providers/kubernetes/kube-connection';
import { GpuSetting, parseGpuSetting } from '../node-runtime/gpus';

/** Repository root (where package.json, templates/ and native/ live). */
export const REPO_ROOT = resolve(__dirname, '..');

export interface AuthConfig {
  enabled: boolean;
  user: string;
  /** '' with auth enabled: generated at first start (shared through Redis, saved in the data dir). */
  password: string;
}

export interface DefaultLimits {
  memoryBytes: number;
  pids: number;
  tmpBytes: number;
}

/** `memory=2Gi,pids=1024,tmp=256Mi` (any subset; the rest keep their defaults). */
export function parseDefaultLimits(raw: string | undefined): DefaultLimits {
  const out: DefaultLimits = { memoryBytes: 2 * 1024 ** 3, pids: 1024, tmpBytes: 256 * 1024 ** 2 };
  for (const part of (raw ?? '').split(',').map((x) => x.trim()).filter(Boolean)) {
    const [k, v, extra] = part.split('=');
    const bad = () => new Error(`config: MLFAAS_DEFAULT_LIMITS entry "${part}" must be memory=<quantity>, pids=<count> or tmp=<quantity>`);
    if (v === undefined || extra !== undefined) throw bad();
    if (k === 'pids') {
      if (!/^\d+$/.test(v) || Number(v) < 16 || Number(v) > 1_000_000)
        throw new Error(`config: MLFAAS_DEFAULT_LIMITS pids=${v} must be a count from 16 to 1000000`);
      out.pids = Number(v);
      continue;
    }
    const bytes = memoryQuantityBytes(v);
    if (bytes === undefined || (k !== 'memory' && k !== 'tmp')) throw bad();
    if (bytes < 16 * 1024 ** 2) throw new Error(`config: MLFAAS_DEFAULT_LIMITS ${k}=${v} is below 16Mi`);
    if (k === 'memory') out.memoryBytes = bytes;
    else out.tmpBytes = bytes;
  }
  return out;
}

/** Every knob of the gateway, local provider and async worker. Parsed once; core code never reads env. */
export interface Config {
  host: string;
  port: number;
  /** Where the embedded redis-server keeps data and AOF, the image store, secrets and pid files. */
  dataDir: string;
  /** `redis://…` of a shared Redis; absent → start an embedded `redis-server` on a unix socket in dataDir. */
  redisUrl?: string;
  /** Request-path Redis command deadline, ms; a request meets an outage with a 503 within it. */
  redisTimeoutMs: number;
  auth: AuthConfig;
  /** Browser origins besides the gateway's own that may call `/system/*` (a UI served elsewhere). */
  allowedOrigins: string[];
  /** Largest request body accepted on any endpoint, bytes. */
  maxBodyBytes: number;
  /** How long the gateway waits for a replica's answer, ms. */
  upstreamTimeoutMs: number;
  /** Requests queued per function in one gateway before tail drop (429). */
  queueDepth: number;
  /** Concurrent requests sent to one replica before queueing (overridable per function). */
  replicaConcurrency: number;
  /** How long a request waits for a first replica when a function is at zero, ms. */
  scaleFromZeroTimeoutMs: number;
  /**
   * `MLFAAS_PROVIDER`: where functions run. `local` (default): replicas are this machine's child
   * processes, run by the agent. `kubernetes`: Deployments in a cluster (the API server from
   * MLFAAS_KUBE_SERVER / _TOKEN / _CA / _INSECURE, else the pod's service account, else kubeconfig);
   * no agent runs in the gateway then (the node agent runs on the nodes).
   */
  provider: 'local' | 'kubernetes';
  kube: KubeConnection;
  /**
   * Kubernetes: how a deploy checks its image (`MLFAAS_KUBE_IMAGE_CHECK`): `registry` (default)
   * asks the image's registry whether it exists and reads its `io.mlfaas.kind` label; `off` takes
   * any image as an inference function, as faas-netes does. `MLFAAS_KUBE_INSECURE_REGISTRIES`:
   * registries spoken to over plain http.
   */
  kubeImages: { check: 'registry' | 'off'; insecure: string[] };
  /**
   * Kubernetes: whether the GPU nodes' node agents run the MPS control daemon
   * (`MLFAAS_KUBE_GPU_MPS`, default false: the gateway cannot see the nodes, the operator says so).
   * Only then are fractional-GPU pods' SM shares declared enforced and changeable.
   */
  kubeGpuMps: boolean;
  /** Run replicas in this process (the local node agent). Only one agent holds the lock at a time. */
  agent: boolean;
  /**
   * Confine function processes (own uid, mount namespace, cgroup): `auto` does when the host
   * allows it (root on Linux) and says so when it cannot; `off` never does.
   */
  isolation: 'auto' | 'off';
  /**
   * `MLFAAS_DEFAULT_LIMITS`: what a confined function gets when it sets no limit of its own —
   * memory (bytes), processes (pids cgroup), and the size of each of its private tmpfs
   * (/tmp, /var/tmp, /dev/shm, its HOME).
   */
  defaultLimits: DefaultLimits;
  /**
   * `MLFAAS_FUNCTION_EGRESS`: where a confined function's network reaches: `none`, its own
   * loopback only; `internet`, public addresses too (never the host, other replicas, private or
   * link-local ranges; see `node-runtime/egress.ts`).
   */
  functionEgress: 'none' | 'internet';
  /** Start the native tokend (when built) and gate replicas' device time through it. */
  tokend: boolean;
  /** tokend's token window, ms. */
  tokendWindowMs: number;
  /** `MLFAAS_GPUS`: this node's GPUs from nvidia-smi (`auto`), none (`off`), or `stub:N` (tests). */
  gpus: GpuSetting;
  /** Seconds per capability point when profiling a newly deployed inference function; 0 = off. */
  profileSeconds: number;
  /**
   * `MLFAAS_PROFILE_MODE`: `predicted` (the default where the CPU latency predictor ships) predicts
   * a CPU replica's profile from its ONNX graph and one measured point; `measured`: the whole grid.
   */
  profileMode?: 'predicted' | 'measured';
  autoscaler: {
    /** Run the inference autoscaler in `mlfaas up` (one leader among processes). */
    enabled: boolean;
    /** Registered policy name (`hybrid`, `kpa`, `static-share`, …). */
    policy: string;
    /** Policy parameters (JSON object), e.g. {"cooldownS": 5}. */
    params: Record<string, unknown>;
    intervalMs: number;
    /** SLO for functions that set no `mlfaas.slo.latency_ms`, ms. */
    defaultSloMs: number;
    /** The SLO guard's window, s (the live autoscaler's SLO guard). */
    sloGuardS: number;
    /** How long the SLO guard's capacity is kept, s; undefined: the guard's own default (GUARD_HOLD_S). */
    sloGuardHoldS?: number;
    /**
     * `MLFAAS_CLUSTER_CAPACITY`: the fixed-cluster mode (docs/scaling.md). Cores the inference
     * functions share (`auto`: this node's); a fixed-cluster controller (`MLFAAS_CLUSTER_CONTROLLER`)
     * then allocates replicas, CPU quotas and accept rates instead of the per-function policy.
     * `lending` (`MLFAAS_CLUSTER_LENDING`, unset: the controller's default) lends idle CPU up to limit 1.
     */
    cluster?: { capacity: number | 'auto'; controller: string; lending?: boolean };
  };
  training: {
    /** Registered training policy (`mlfaas`, `elasticflow`, `edf`, `gandiva`, …). */
    policy: string;
    /** Scheduling round, s. */
    slotSeconds: number;
    /** Worker slots of this node for training jobs (a power of two). */
    slots: number;
    /** A dead scheduler's jobs resume after this, ms. */
    lockMs: number;
    /** Kubernetes: the PersistentVolumeClaim (ReadWriteMany, in each function namespace) holding the jobs' checkpoints. */
    checkpointClaim: string;
    /** Kubernetes: bound of one profile run as a pod (scheduling, image pull, two epochs), ms. */
    profileTimeoutMs: number;
  };
  /** Readiness probe deadline for a starting replica, ms. */
  readinessTimeoutMs: number;
  /** Time a replica leaves balancers before SIGTERM on scale-down, ms. */
  drainMs: number;
  /** SIGTERM → SIGKILL grace, ms. */
  terminationGraceMs: number;
  async: {
    concurrency: number;
    /** BullMQ lock duration: a crashed worker's job is retried after this, ms. */
    lockMs: number;
    attempts: number;
    callbackTimeoutMs: number;
    /** `MLFAAS_CALLBACK_ALLOW`: hosts (`host` or `host:port`) callbacks may go to; empty = any not refused. */
    callbackAllow: string[];
  };
  /** Directory of templates for `mlfaas build` (lang → templates/<lang>). */
  templatesDir: string;
  /** `MLFAAS_MODEL_STORE`: the platform's model store, what `file:///<path>` model URIs name (default `<dataDir>/models`). */
  modelStore: string;
  /** `MLFAAS_MODEL_CACHE_BYTES`: size of each node's model cache (bytes or a quantity like 10Gi; default 10Gi): LRU eviction beyond it. */
  modelCacheBytes: number;
  version: { release: string; sha: string };
}

type Env = Record<string, string | undefined>;

function int(env: Env, key: string, def: number, min: number): number {
  const raw = env[key];
  if (raw === undefined || raw === '') return def;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min) {
    throw new Error(`config: ${key}="${raw}" must be an integer ≥ ${min}`);
  }
  return n;
}

function seconds(env: Env, key: string, def: number, max: number): number {
  const raw = env[key];
  if (raw === undefined || raw === '') return def;
  const n = Number(raw);
  if (!(n >= 0 && n <= max)) throw new Error(`config: ${key}="${raw}" must be a number of seconds in [0, ${max}]`);
  return n;
}

function jsonObject(env: Env, key: string): Record<string, unknown> {
  const raw = env[key];
  if (raw === undefined || raw === '') return {};
  let v: unknown;
  try {
    v = JSON.parse(raw);
  } catch {
    throw new Error(`config: ${key} is not valid JSON`);
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new Error(`config: ${key} must be a JSON object`);
  return v as Record<string, unknown>;
}

function hostList(env: Env, key: string): string[] {
  try {
    return parseAllowList(env[key] ?? '');
  } catch (e) {
    throw new Error(`config: ${key}: ${(e as Error).message}`);
  }
}

function powerOfTwo(env: Env, key: string, def: number): number {
  const n = int(env, key, def, 1);
  if ((n & (n - 1)) !== 0) throw new Error(`config: ${key}="${n}" must be a power of two (buddy placement)`);
  return n;
}

/** `MLFAAS_CLUSTER_CAPACITY`: a number of cores > 0, or `auto`. */
function clusterCapacity(raw: string): number | 'auto' {
  if (raw === 'auto') return 'auto';
  const n = Number(raw);
  if (!(n > 0 && n <= 100_000)) throw new Error(`config: MLFAAS_CLUSTER_CAPACITY="${raw}" must be a number of cores > 0, or auto`);
  return n;
}

/** `MLFAAS_MODEL_CACHE_BYTES`: bytes or a quantity (10Gi), at least 1Mi; default 10Gi. */
function cacheBytes(raw: string | undefined): number {
  if (raw === undefined || raw === '') return 10 * 1024 ** 3;
  const b = /^\d+$/.test(raw) ? Number(raw) : memoryQuantityBytes(raw);
  if (b === undefined || !(b >= 1024 ** 2)) throw new Error(`config: MLFAAS_MODEL_CACHE_BYTES="${raw}" must be bytes or a quantity like 10Gi, at least 1Mi`);
  return b;
}

function bool(env: Env, key: string, def: boolean): boolean {
  const raw = env[key];
  if (raw === undefined || raw === '') return def;
  if (/^(1|true|yes|on)$/i.test(raw)) return true;
  if (/^(0|false|no|off)$/i.test(raw)) return false;
  throw new Error(`config: ${key}="${raw}" must be true or false`);
}

function oneOf<T extends string>(env: Env, key: string, allowed: readonly T[], def: T): T {
  const raw = env[key];
  if (raw === undefined || raw === '') return def;
  if (!(allowed as readonly string[]).includes(raw)) throw new Error(`config: ${key}="${raw}" must be one of ${allowed.join(', ')}`);
  return raw as T;
}

function auth(env: Env): AuthConfig {
  // on by default, as in OpenFaaS; MLFAAS_BASIC_AUTH=false is an explicit (and logged) opt-out
  const enabled = bool(env, 'MLFAAS_BASIC_AUTH', true);
  let user = env.MLFAAS_AUTH_USER ?? 'admin';
  let password = env.MLFAAS_AUTH_PASSWORD ?? '';
  const dir = env.MLFAAS_AUTH_DIR; // OpenFaaS layout: basic-auth-user, basic-auth-password
  if (dir) {
    user = readFileSync(join(dir, 'basic-auth-user'), 'utf8').trim();
    password = readFileSync(join(dir, 'basic-auth-password'), 'utf8').trim();
    if (password === '') throw new Error(`config: ${join(dir, 'basic-auth-password')} is empty`);
  }
  if (user === '' || user.includes(':')) throw new Error('config: the basic-auth user must be non-empty and hold no ":"');
  // an empty password with auth on: the gateway generates one at first start (see auth-credentials)
  return { enabled, user, password };
}

/** Defaults → env → overrides (from flags), validated with messages naming the variable. */
export function loadConfig(env: Env = process.env, overrides: Partial<Config> = {}): Config {
  const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string };
  const cfg: Config = {
    host: env.MLFAAS_HOST ?? '127.0.0.1',
    port: int(env, 'MLFAAS_PORT', 8080, 0),
    dataDir: resolve(env.MLFAAS_DATA_DIR ?? join(REPO_ROOT, '.mlfaas')),
    redisUrl: env.MLFAAS_REDIS_URL || undefined,
    redisTimeoutMs: int(env, 'MLFAAS_REDIS_TIMEOUT_MS', 2000, 1),
    auth: auth(env),
    allowedOrigins: (env.MLFAAS_ALLOWED_ORIGINS ?? '').split(',').map((o) => o.trim()).filter(Boolean),
    maxBodyBytes: int(env, 'MLFAAS_MAX_BODY_BYTES', 16 * 1024 * 1024, 1),
    upstreamTimeoutMs: int(env, 'MLFAAS_UPSTREAM_TIMEOUT_MS', 60_000, 1),
    queueDepth: int(env, 'MLFAAS_QUEUE_DEPTH', 512, 0),
    replicaConcurrency: int(env, 'MLFAAS_REPLICA_CONCURRENCY', 64, 1),
    scaleFromZeroTimeoutMs: int(env, 'MLFAAS_SCALE_FROM_ZERO_TIMEOUT_MS', 60_000, 1),
    provider: oneOf(env, 'MLFAAS_PROVIDER', ['local', 'kubernetes'] as const, 'local'),
    kube: connectionFromEnv(env),
    kubeImages: {
      check: oneOf(env, 'MLFAAS_KUBE_IMAGE_CHECK', ['registry', 'off'] as const, 'registry'),
      insecure: (env.MLFAAS_KUBE_INSECURE_REGISTRIES ?? '').split(',').map((h) => h.trim()).filter(Boolean),
    },
    kubeGpuMps: bool(env, 'MLFAAS_KUBE_GPU_MPS', false),
    agent: bool(env, 'MLFAAS_AGENT', true),
    isolation: oneOf(env, 'MLFAAS_ISOLATION', ['auto', 'off'] as const, 'auto'),
    defaultLimits: parseDefaultLimits(env.MLFAAS_DEFAULT_LIMITS),
    functionEgress: oneOf(env, 'MLFAAS_FUNCTION_EGRESS', ['none', 'internet'] as const, 'none'),
    tokend: bool(env, 'MLFAAS_TOKEND', true),
    tokendWindowMs: int(env, 'MLFAAS_TOKEND_WINDOW_MS', 20, 1),
    gpus: parseGpuSetting(env.MLFAAS_GPUS),
    profileSeconds: seconds(env, 'MLFAAS_PROFILE_SECONDS', 1, 10),
    ...(env.MLFAAS_PROFILE_MODE ? { profileMode: oneOf(env, 'MLFAAS_PROFILE_MODE', ['predicted', 'measured'] as const, 'predicted') } : {}),
    autoscaler: {
      enabled: bool(env, 'MLFAAS_AUTOSCALER', true),
      policy: env.MLFAAS_AUTOSCALER_POLICY || 'hybrid',
      params: jsonObject(env, 'MLFAAS_AUTOSCALER_PARAMS'),
      intervalMs: int(env, 'MLFAAS_AUTOSCALER_INTERVAL_MS', 1000, 50),
      defaultSloMs: int(env, 'MLFAAS_DEFAULT_SLO_MS', 1000, 1),
      sloGuardS: int(env, 'MLFAAS_SLO_GUARD_S', 5, 1),
      ...(env.MLFAAS_SLO_GUARD_HOLD_S ? { sloGuardHoldS: seconds(env, 'MLFAAS_SLO_GUARD_HOLD_S', 0, 3600) } : {}),
      ...(env.MLFAAS_CLUSTER_CAPACITY
        ? { cluster: { capacity: clusterCapacity(env.MLFAAS_CLUSTER_CAPACITY), controller: env.MLFAAS_CLUSTER_CONTROLLER || 'grid',
            ...(env.MLFAAS_CLUSTER_LENDING ? { lending: bool(env, 'MLFAAS_CLUSTER_LENDING', false) } : {}) } }
        : {}),
    },
    training: {
      policy: env.MLFAAS_TRAINING_POLICY || 'mlfaas',
      slotSeconds: int(env, 'MLFAAS_TRAINING_SLOT_S', 60, 1),
      slots: powerOfTwo(env, 'MLFAAS_TRAINING_SLOTS', 4),
      lockMs: int(env, 'MLFAAS_TRAINING_LOCK_MS', 30_000, 1000),
      checkpointClaim: env.MLFAAS_TRAINING_CHECKPOINT_CLAIM || 'mlfaas-checkpoints',
      profileTimeoutMs: int(env, 'MLFAAS_TRAINING_PROFILE_TIMEOUT_MS', 300_000, 1000),
    },
    readinessTimeoutMs: int(env, 'MLFAAS_READINESS_TIMEOUT_MS', 60_000, 1),
    drainMs: int(env, 'MLFAAS_DRAIN_MS', 1_000, 0),
    terminationGraceMs: int(env, 'MLFAAS_TERMINATION_GRACE_MS', 10_000, 0),
    async: {
      concurrency: int(env, 'MLFAAS_ASYNC_CONCURRENCY', 8, 1),
      lockMs: int(env, 'MLFAAS_ASYNC_LOCK_MS', 30_000, 1000),
      attempts: int(env, 'MLFAAS_ASYNC_ATTEMPTS', 5, 1),
      callbackTimeoutMs: int(env, 'MLFAAS_CALLBACK_TIMEOUT_MS', 10_000, 1),
      callbackAllow: hostList(env, 'MLFAAS_CALLBACK_ALLOW'),
    },
    templatesDir: resolve(env.MLFAAS_TEMPLATES_DIR ?? join(REPO_ROOT, 'templates')),
    modelStore: resolve(env.MLFAAS_MODEL_STORE || join(resolve(env.MLFAAS_DATA_DIR ?? join(REPO_ROOT, '.mlfaas')), 'models')),
    modelCacheBytes: cacheBytes(env.MLFAAS_MODEL_CACHE_BYTES),
    version: { release: pkg.version, sha: env.MLFAAS_GIT_SHA ?? 'dev' },
  };
  return { ...cfg, ...overrides };
}
