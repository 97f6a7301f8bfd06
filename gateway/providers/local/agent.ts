import { createHash, randomBytes } from 'node:crypto';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { Lease } from '../../lib/lease';
import type Redis from 'ioredis';
import { FunctionRef, parseRefKey, refKey } from '../../lib/names';
import { keys, replicaSettingsKey } from '../../registry/keys';
import { FunctionRecord, Registry, ReplicaInfo } from '../../registry/registry';
import { PlacementBook } from '../../registry/placements';
import { CpuAllotment, CpuEnforcer } from '../../../node-runtime/cpu-enforcer';
import { coresOfDevice } from '../../../node-runtime/cpu-values';
import { cpuCores } from '../../../node-runtime/cgroups';
import { GpuReplicas } from '../../../node-runtime/gpu-replica';
import { MODEL_CACHE_DEFAULT_BYTES, ModelCache } from '../../../node-runtime/model-cache';
import { ImageStore } from './image-store';
import { LogSink } from './log-sink';
import { batchGrid, CapabilityProfile, profileKey, profileReplica, readProfile } from '../../../node-runtime/profiler';
import { modelFile } from './model-file';
import type { CapabilityProfiler } from '../../ports/capability-profiler';
import { Isolation, Replica, ReplicaHost, ReplicaPlan } from './replica';
import { planRollout, RolloutReplica } from './rollout';
import { ServedVersions } from './served-version';
import { SecretFiles } from './secret-files';
import { ShareReplacer } from './share-replacer';

export interface AgentOptions {
  dataDir: string;
  readinessTimeoutMs: number;
  drainMs: number;
  terminationGraceMs: number;
  extraEnv?: Record<string, string>;
  /** Lock lease, ms; a dead agent's functions are taken over after this. */
  leaseMs?: number;
  readSecret(namespace: string, name: string): Promise<string | undefined>;
  /** Confine replicas (own uid, mount namespace, cgroup); absent = plain child processes. */
  isolation?: Isolation;
  /**
   * Puts each replica's cores (its placed device) and time quota into effect: cgroups where
   * writable, else tokend; absent = nothing enforced.
   */
  cpu?: CpuEnforcer;
  /** The node's cores (a replica not placed yet gets all of them); default: every core. */
  nodeCores?: number[];
  /** GPU node: the GPUs replicas that ask for one (`mlfaas.gpu`) are given; absent = none. */
  gpus?: GpuReplicas;
  /** Applies a GPU replica's time quota to its device (tokend's `gpuN`); absent = not enforced. */
  gpuQuota?(pid: number, device: number, quota: number, limit?: number): Promise<void>;
  /** Capability profiling of ml-inference functions at deploy (seconds per point); absent = off. */
  profileSeconds?: number;
  /**
   * `predicted` (default where the CPU latency predictor ships): a CPU replica's profile is
   * predicted from its ONNX graph, then from one measured point; `measured`: the whole grid.
   */
  profileMode?: 'predicted' | 'measured';
  /** The deploy-time profile's stages: what is predicted, measured, stored (a port, RaPP's; absent: no profiling). */
  profiler?: CapabilityProfiler;
  /** A replica started cold for `cause` (`sm-share`: a replacement at a new SM share); metrics. */
  coldStart?(ref: FunctionRef, cause: 'sm-share'): void;
  /**
   * Models by URI (`mlfaas.model.uri`): the model store `file://` names (default `<dataDir>/models`)
   * and the node cache's size (default 10 GiB); the cache lives in `<dataDir>/model-cache`.
   */
  models?: { storeDir?: string; cacheBytes?: number };
}

/**
 * The local node agent: makes the running child processes match the registry (desired count,
 * spec version) for every function. One agent at a time holds a lease in Redis; a standby takes
 * over when the holder dies and drops the dead agent's replica records.
 */
export class LocalAgent {
  private readonly lease: Lease;
  private replicas = new Map<string, Replica[]>();
  private chains = new Map<string, Promise<void>>();
  private closed = false;
  private timers: NodeJS.Timeout[] = [];
  private unsubscribe?: () => void;
  private readonly host: ReplicaHost;
  private readonly leaseMs: number;
  private readonly cpu?: CpuEnforcer;
  private readonly nodeCores: number[];
  private readonly placements: PlacementBook;
  private readonly gpuQuota?: (pid: number, device: number, quota: number, limit?: number) => Promise<void>;
  /** Allotment last applied per replica process (by id: a reused pid must not inherit it). */
  private applied = new Map<string, string>();
  /** Replica pids being profiled (their quota belongs to the profiler meanwhile). */
  private profiling = new Set<number>();
  private profiled = new Set<string>();
  private readonly profileSeconds?: number;
  private readonly profileMode: 'predicted' | 'measured';
  private readonly profiler?: CapabilityProfiler;
  private readonly secrets: SecretFiles;
  /** The last 'rolling update stalled' line logged per function (each one is logged once). */
  private stalled = new Map<string, string>();
  /** The version that last served each function (a stalled update survives a restart). */
  private readonly served: ServedVersions;
  /** Replacements of GPU replicas at a new SM share (only where MPS enforces the share). */
  readonly shares: ShareReplacer;

  constructor(
    private readonly redis: Redis,
    private readonly registry: Registry,
    private readonly images: ImageStore,
    private readonly logs: LogSink,
    opts: AgentOptions,
  ) {
    this.leaseMs = opts.leaseMs ?? 5000;
    this.lease = new Lease(redis, keys.agentLock, this.leaseMs, () => this.lead(), () => this.stopAll(false), (e) =>
      process.stderr.write(`[mlfaas] agent lease: ${e.message}\n`),
    );
    this.cpu = opts.cpu;
    this.nodeCores = opts.nodeCores ?? cpus().map((_, i) => i);
    this.placements = new PlacementBook(redis);
    this.gpuQuota = opts.gpuQuota;
    this.profileSeconds = opts.profileSeconds;
    this.profiler = opts.profiler;
    this.profileMode = opts.profileMode ?? (this.profiler?.canPredict() ? 'predicted' : 'measured');
    this.secrets = new SecretFiles(opts.dataDir, opts.readSecret, opts.isolation, (instance, text) => this.host.log(instance, text));
    this.served = new ServedVersions(redis);
    this.shares = new ShareReplacer(redis, {
      newReplica: (ref, plan) => {
        const r = this.newReplica(plan);
        this.owner.set(r.id, ref);
        return r;
      },
      swap: (ref, old, next) => this.replicas.set(refKey(ref), [...this.local(ref).filter((r) => r !== old), next]),
      forget: (id) => this.forget(id),
      log: (ref, instance, text) => this.logs.push(ref, instance, text),
      coldStart: (ref, cause) => opts.coldStart?.(ref, cause),
    });
    this.host = {
      agentId: this.id,
      dataDir: opts.dataDir,
      readinessTimeoutMs: opts.readinessTimeoutMs,
      drainMs: opts.drainMs,
      terminationGraceMs: opts.terminationGraceMs,
      extraEnv: opts.extraEnv ?? {},
      // a replica forgotten after stopping may still flush output or race a publish: drop those
      publish: async (info) => {
        const ref = this.owner.get(info.id);
        if (ref) await this.registry.putReplica(ref, info);
      },
      unpublish: async (id) => {
        const ref = this.owner.get(id);
        if (ref) await this.registry.removeReplica(ref, id);
      },
      log: (instance, text) => {
        const ref = this.owner.get(instance);
        if (ref) this.logs.push(ref, instance, text);
      },
      writeSecrets: (ref, names, instance, uid) => this.secrets.write(ref, names, instance, uid),
      isolation: opts.isolation,
      // a restarted replica keeps its placement: its new process sizes its threads to it
      cpuCores: async (id) => {
        const ref = this.owner.get(id);
        const placed = ref ? (await this.placements.read(ref).catch(() => ({}) as Record<string, { gpu: string }>))[id] : undefined;
        return coresOfDevice(placed?.gpu, this.nodeCores).length;
      },
      gpus: opts.gpus,
      models: new ModelCache({
        dir: join(opts.dataDir, 'model-cache'),
        storeDir: opts.models?.storeDir ?? join(opts.dataDir, 'models'),
        maxBytes: opts.models?.cacheBytes ?? MODEL_CACHE_DEFAULT_BYTES,
        log: (line) => process.stderr.write(`[mlfaas] ${line}\n`),
      }),
    };
  }

  /** Keeps running functions' secret files in step with the store (updates and removals). */
  private async syncSecrets(): Promise<void> {
    for (const [key, list] of this.replicas) {
      const r = list.find((x) => !x.isStopping);
      if (r) await this.secrets.write(r.plan.ref, r.plan.spec.secrets ?? [], '', r.runUid);
      else if (!list.length) this.secrets.remove(parseRefKey(key));
    }
  }

  /** This agent's identity (its lease token), written into the replica records it owns. */
  get id(): string {
    return this.lease.token;
  }

  get isLeader(): boolean {
    return this.lease.isHeld;
  }

  /** Bumped by stopAll: a reconcile that started before must not write its replicas back. */
  private gen = 0;
  private owner = new Map<string, FunctionRef>();

  /** Tries for the lease now and every lease/3 ms; reconciles while it holds it. */
  async start(): Promise<void> {
    await this.lease.start();
    this.timers.push(
      setInterval(() => this.isLeader && void this.reconcileAll().then(() => this.syncSecrets()).catch(() => undefined), 2000),
    );
  }

  private async lead(): Promise<void> {
    await this.registry.dropForeignReplicas(this.id);
    this.unsubscribe?.();
    this.unsubscribe = await this.registry.feed.subscribe((c) => void this.reconcile(c.key));
    await this.reconcileAll();
  }

  async reconcileAll(): Promise<void> {
    const fns = await this.redis.hkeys(keys.functions);
    const known = new Set([...fns, ...this.replicas.keys()]);
    await Promise.all([...known].map((k) => this.reconcile(k)));
  }

  /** Serialised per function: the next reconcile of a key waits for the previous one. */
  reconcile(key: string): Promise<void> {
    const prev = this.chains.get(key) ?? Promise.resolve();
    const next = prev.then(() => this.reconcileOne(key)).catch((e) => {
      this.logs.push(parseRefKey(key), 'agent', `reconcile failed: ${(e as Error).message}`);
    });
    this.chains.set(key, next);
    return next;
  }

  private async reconcileOne(key: string): Promise<void> {
    if (!this.isLeader || this.closed) return;
    const gen = this.gen;
    const ref = parseRefKey(key);
    const rec = await this.registry.get(ref);
    const stale = () => gen !== this.gen || !this.isLeader || this.closed;
    if (stale()) return;
    const list = (this.replicas.get(key) ?? []).filter((r) => !r.isStopping);
    if (!rec || rec.kind === 'training') {
      this.replicas.delete(key);
      this.stalled.delete(key);
      await Promise.all(list.map((r) => r.stop()));
      this.secrets.remove(ref);
      await this.served.forget(ref, !rec);
      if (!rec) await this.redis.del(keys.replicas(ref));
      return;
    }
    const [desired, named] = await Promise.all([
      this.registry.desired(ref),
      this.redis.smembers(keys.evict(ref)).catch(() => [] as string[]),
    ]);
    if (stale()) return;
    const hash = specHash(rec, this.images.find(rec.spec.image)?.builtAt ?? '');
    const evict = new Set(named);
    // first look at this function since the agent (re)started: an update left stalled brings its old version back
    const recovered = !this.replicas.has(key) && desired > 0 ? await this.recoverServed(ref, hash, desired) : [];
    if (stale()) return;
    const plan = planRollout(desired, [...list, ...recovered].map((r) => asRollout(r, hash, evict)));
    if (plan.stalled && this.stalled.get(key) !== plan.stalled) this.logs.push(ref, 'agent', plan.stalled);
    if (plan.stalled) this.stalled.set(key, plan.stalled);
    else this.stalled.delete(key);
    const started: Replica[] = [...recovered];
    const manifest = plan.start > 0 ? this.images.find(rec.spec.image) : undefined;
    if (plan.start > 0 && !manifest) this.logs.push(ref, 'agent', `image ${rec.spec.image} is missing from the store`);
    for (let i = 0; manifest && i < plan.start; i++) started.push(this.newReplica({ ref, spec: rec.spec, manifest, specHash: hash }));
    const leaving = list.filter((r) => plan.stop.includes(r.id));
    const evicted = leaving.filter((r) => evict.has(r.id)).map((r) => r.id);
    if (evicted.length) await this.redis.srem(keys.evict(ref), ...evicted);
    if (stale()) return; // lost the lease meanwhile: nothing was started
    // listed before they spawn: every process of a function is in the list or stopping
    this.replicas.set(key, [...list.filter((r) => !leaving.includes(r)), ...started]);
    for (const r of started) {
      this.owner.set(r.id, ref);
      void r.start().catch((e: Error) => this.logs.push(ref, r.id, `start failed: ${e.message}`));
    }
    await Promise.all(leaving.map((r) => r.stop()));
    for (const r of leaving) this.forget(r.id);
    if (this.host.gpus?.setup.mpsPipeDir && !stale()) await this.shares.step(ref, (this.replicas.get(key) ?? []).filter((r) => !r.isStopping), hash);
    await this.enforceQuotas(ref);
    this.maybeProfile(ref, rec, hash);
    await this.served.note(ref, { hash, spec: rec.spec }, (this.replicas.get(key) ?? []).map((r) => asRollout(r, hash, evict)));
  }

  /**
   * Replicas of the version that last served the whole function when the present one is another
   * (an update that had not completed when the agent stopped): started beside the new version,
   * so a stalled update keeps its old version serving across a restart, as before it.
   */
  private async recoverServed(ref: FunctionRef, hash: string, desired: number): Promise<Replica[]> {
    const served = await this.served.read(ref);
    if (!served || served.hash === hash) return [];
    const manifest = this.images.find(served.spec.image);
    if (!manifest) return [];
    this.logs.push(ref, 'agent',
      `an update to a new version had not completed: starting ${desired} replica(s) of the version that served before (${served.hash}) beside it`);
    return Array.from({ length: desired }, () =>
      Object.assign(this.newReplica({ ref, spec: served.spec, manifest, specHash: served.hash }), { recovering: true }));
  }

  private newReplica(plan: ReplicaPlan): Replica {
    return new Replica(`${plan.ref.name}-${randomBytes(3).toString('hex')}`, plan, this.host);
  }

  /**
   * Once per function version: measure its capability (throughput and latency by batch size and
   * quota) on its first ready replica, in the background, and store it for the autoscaler.
   */
  private maybeProfile(ref: FunctionRef, rec: FunctionRecord, version: string): void {
    const profiler = this.profiler;
    if (this.profileSeconds === undefined || !profiler || rec.kind !== 'inference') return;
    const key = `${refKey(ref)}@${version}`;
    if (this.profiled.has(key)) return;
    // the runtimes that serve the profiler's v1 zero request (GET / names the instance shape): ONNX and PyTorch
    const r = this.local(ref).find((x) => x.state === 'ready' && x.plan.specHash === version &&
      (x.plan.manifest.language === 'ml-inference' || x.plan.manifest.language === 'ml-inference-torch'));
    if (!r || !r.pid) return;
    this.profiled.add(key);
    const pid = r.pid;
    void (async () => {
      const existing = await readProfile(this.redis, ref);
      // a graph-only prediction left by an agent that stopped before measuring is redone
      if (existing?.version === version && existing.source !== 'predicted') return;
      this.profiling.add(pid);
      const info = r.info();
      const quotas = this.enforces(r) ? [1, 0.5, 0.25] : [1];
      // the autoscaler's device is one core: profile on the placed one (else the first), so that
      // "quota q" in the profile means what it means once the replica is placed
      const placed = (await this.placements.read(ref))[r.id];
      const cores = coresOfDevice(placed?.gpu, this.nodeCores).slice(0, 1);
      const device = r.gpu !== undefined ? 'gpu' : 'cpu';
      const model = this.profileMode === 'predicted' && device === 'cpu' && quotas.length > 1
        ? (r.modelPath ?? modelFile(r.plan.manifest.dir, rec.spec.envVars)) : undefined;
      await profiler.profile(
        {
          measure: (batches, qs) =>
            profileReplica(
              { socket: info.socket, url: info.url },
              { batches, quotas: qs, seconds: this.profileSeconds! },
              (q) => this.apply(r, { id: r.id, pid, cores, quota: q, limitCores: limitOf(r) }),
              async () => {
                // back to the replica's own allotment (its placement and quota) at the next enforce
                this.applied.delete(`${r.id}:${pid}`);
              },
            ),
          store: (stage) =>
            this.redis.set(profileKey(ref),
              JSON.stringify({ function: refKey(ref), version, measuredAt: new Date().toISOString(), device, ...stage } satisfies CapabilityProfile))
              .then(() => undefined),
          log: (line) => this.logs.push(ref, 'agent', line),
        },
        { batches: batchGrid(rec.spec.ml.maxBatchSize ?? 8), quotas, sloMs: rec.spec.ml.sloLatencyMs },
        model,
      );
    })()
      .catch((e) => {
        this.profiled.delete(key);
        this.logs.push(ref, 'agent', `capability profile failed: ${(e as Error).message}`);
      })
      .finally(() => {
        this.profiling.delete(pid);
        this.applied.delete(`${r.id}:${pid}`);
        void this.reconcile(refKey(ref));
      });
  }

  /**
   * Puts this function's running replicas' CPU allotments into effect: the cores of the device
   * the autoscaler placed each on (all of the node's until placed) and its quota (1 until set).
   */
  private async enforceQuotas(ref: FunctionRef): Promise<void> {
    if (!this.cpu && !this.gpuQuota) return;
    const [settings, book] = await Promise.all([this.redis.hgetall(replicaSettingsKey(ref)), this.placements.read(ref)]);
    for (const r of [...this.local(ref), ...this.shares.of(ref)]) {
      const pid = r.pid;
      if (!pid || r.state !== 'ready' || this.profiling.has(pid)) continue;
      if (!this.enforces(r)) continue;
      const a = this.allotment(r, pid, book, settings);
      const sig = r.gpu !== undefined ? `gpu${r.gpu}@${a.quota}-${a.limit ?? ''}` : `${a.cores.join(',')}@${a.quota}-${a.limit ?? ''}/${a.limitCores ?? ''}`;
      if (this.applied.get(`${r.id}:${pid}`) === sig) continue;
      try {
        await this.apply(r, a);
      } catch (e) {
        this.logs.push(ref, r.id, `${r.gpu !== undefined ? 'gpu quota' : 'cpu allotment'} ${sig} failed: ${(e as Error).message}`);
        continue;
      }
      this.applied.set(`${r.id}:${pid}`, sig);
      r.quota = a.quota;
      // placed (or moved) since it started: its quota is now a fraction of these cores (ReplicaInfo.cores)
      if (r.gpu === undefined && r.cores !== a.cores.length && r.state === 'ready') {
        r.cores = a.cores.length;
        await this.host.publish(r.info());
      }
    }
  }

  /** Whether this node enforces anything for the replica (its GPU's window, or its CPU allotment). */
  private enforces(r: Replica): boolean {
    return r.gpu !== undefined ? !!this.gpuQuota : !!this.cpu;
  }

  /**
   * A GPU replica's quota is its device's time quota (tokend's gpuN window), its CPU left whole;
   * any other replica's cores and quota go to the CPU enforcer.
   */
  private async apply(r: Replica, a: CpuAllotment): Promise<void> {
    if (r.gpu !== undefined) await this.gpuQuota?.(a.pid, r.gpu, a.quota, a.limit);
    else await this.cpu?.apply(a);
  }

  private allotment(r: Replica, pid: number, book: Record<string, { gpu: string }>, settings: Record<string, string>): CpuAllotment {
    const set = settings[r.id] ? (JSON.parse(settings[r.id]) as { quota?: number; limit?: number }) : {};
    return { id: r.id, pid, cores: coresOfDevice(book[r.id]?.gpu, this.nodeCores), quota: set.quota ?? 1, limit: set.limit, limitCores: limitOf(r) };
  }

  /**
   * Pushes every running replica's quota to the limiter again, e.g. after tokend restarted and
   * lost its rules; replicas being profiled keep the profiler's quota.
   */
  async reapplyQuotas(): Promise<void> {
    this.applied.clear();
    for (const key of [...this.replicas.keys()]) await this.enforceQuotas(parseRefKey(key));
  }

  private forget(id: string): void {
    this.owner.delete(id);
    for (const k of this.applied.keys()) if (k.startsWith(`${id}:`)) this.applied.delete(k);
  }

  /** Replicas this agent runs for a function (for tests and the node agent's quota work). */
  local(ref: FunctionRef): Replica[] {
    return this.replicas.get(refKey(ref)) ?? [];
  }

  private async stopAll(drain: boolean): Promise<void> {
    this.gen++;
    const all = [...this.replicas.values()].flat();
    this.replicas.clear();
    await Promise.all([...all.map((r) => r.stop({ drain })), this.shares.stopAll()]);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.timers.forEach(clearInterval);
    this.unsubscribe?.();
    await Promise.all([...this.chains.values()]);
    await this.stopAll(false);
    await this.lease.close();
  }
}

/** The function's `limits.cpu`, cores (a cap on the replica's bandwidth), if it has one. */
function limitOf(r: Replica): number | undefined {
  const l = r.plan.spec.limits?.cpu;
  return l ? cpuCores(l) : undefined;
}

/** A replica as the pure rollout policy sees it. */
function asRollout(r: Replica, hash: string, evict: Set<string>): RolloutReplica {
  const { startedAt, restarts, lastError } = r.info();
  return { id: r.id, version: r.plan.specHash === hash ? 'current' : 'old', state: r.state, startedAt, evict: evict.has(r.id), restarts, lastError,
    recovering: r.recovering };
}

/** The spec and image build a replica was started from; a change means a rolling update. */
export function specHash(rec: FunctionRecord, imageBuiltAt: string): string {
  return createHash('sha1').update(JSON.stringify(rec.spec)).update(imageBuiltAt).digest('hex').slice(0, 12);
}

export type { ReplicaInfo };
