import type Redis from 'ioredis';
import { ErrorCode, invalid, notFound, PlatformError } from '../../errors';
import { DEFAULT_NAMESPACE, FunctionRef, parseRefKey } from '../../lib/names';
import { ChangeListener } from '../../registry/change-feed';
import { FunctionSpec } from '../../registry/function-spec';
import { keys, replicaSettingsKey } from '../../registry/keys';
import { FunctionRecord, Registry, ReplicaInfo } from '../../registry/registry';
import { RedisSecretStore } from '../../registry/secrets';
import { Enforcement, FunctionProvider, FunctionStatus, LogLine, LogQuery, ProviderInfo } from '../function-provider';
import { enforcementOf } from '../../../node-runtime/cpu-enforcer';
import { ImageStore } from './image-store';
import { readLogs } from './log-reader';
import { CapabilityProfile, profileKey, readProfile } from '../../../node-runtime/profiler';

/**
 * The local provider: functions, desired counts and secrets in Redis; replicas run as child
 * processes by whichever `LocalAgent` holds the lease. Any number of gateways can share it.
 */
export class LocalProvider implements FunctionProvider {
  readonly secrets: RedisSecretStore;
  /** Declared by the process that runs the agent; a gateway without one enforces nothing itself. */
  private enforced: Enforcement = {
    ...enforcementOf(undefined, false),
    summary: 'no agent in this process: the process that runs the agent declares what it enforces',
  };

  constructor(
    private readonly redis: Redis,
    readonly registry: Registry,
    readonly images: ImageStore,
    private readonly version: { release: string; sha: string },
  ) {
    this.secrets = new RedisSecretStore(redis);
  }

  info(): ProviderInfo {
    return { provider: 'mlfaas-local', orchestration: 'local', version: this.version };
  }

  enforcement(): Enforcement {
    return this.enforced;
  }

  /**
   * Set once the agent's mechanisms are known (cgroups writable or not, tokend running or not,
   * MPS or not), and written to Redis for an autoscaler in another process.
   */
  async declareEnforcement(e: Enforcement): Promise<void> {
    this.enforced = e;
    this.declared = true;
    await this.redis.set(keys.enforcement, JSON.stringify(e));
  }

  private declared = false;

  /** This process's agent's declaration, else the one an agent elsewhere wrote, else "no agent". */
  async declaredEnforcement(): Promise<Enforcement> {
    if (this.declared) return this.enforced;
    const raw = await this.redis.get(keys.enforcement);
    return raw ? (JSON.parse(raw) as Enforcement) : this.enforced;
  }

  private record(spec: FunctionSpec, createdAt: string): FunctionRecord {
    const m = this.images.require(spec.image);
    if (m.mode === 'classic' && !spec.envProcess && !m.fprocess) {
      throw invalid('envProcess', `image "${spec.image}" is a classic watchdog image and needs envProcess (fprocess)`);
    }
    return { spec, createdAt, kind: m.kind };
  }

  private static initialReplicas(rec: FunctionRecord): number {
    return rec.kind === 'training' ? 0 : rec.spec.ml.minScale;
  }

  async deploy(spec: FunctionSpec): Promise<void> {
    const rec = this.record(spec, new Date().toISOString());
    const ref = { name: spec.service, namespace: spec.namespace };
    await this.redis.sadd(keys.namespaces, spec.namespace);
    if (!(await this.registry.put(rec, 'absent'))) {
      throw new PlatformError(ErrorCode.Conflict, `function ${spec.service}.${spec.namespace} already exists; use PUT to update`, 'service');
    }
    await this.registry.setDesired(ref, LocalProvider.initialReplicas(rec));
  }

  async update(spec: FunctionSpec): Promise<void> {
    const ref = { name: spec.service, namespace: spec.namespace };
    const old = await this.registry.get(ref);
    if (!old) throw notFound(`function ${spec.service}.${spec.namespace} not found`);
    const rec = this.record(spec, old.createdAt);
    if (!(await this.registry.put(rec, 'present'))) throw notFound(`function ${spec.service}.${spec.namespace} not found`);
    const cur = await this.registry.desired(ref);
    const want = rec.kind === 'training' ? 0 : Math.min(Math.max(cur, spec.ml.minScale), spec.ml.maxScale);
    await this.registry.setDesired(ref, old.kind === 'training' && rec.kind !== 'training' ? spec.ml.minScale : want);
  }

  async remove(ref: FunctionRef): Promise<void> {
    if (!(await this.registry.remove(ref))) throw notFound(`function ${ref.name}.${ref.namespace} not found`);
    await this.redis.del(replicaSettingsKey(ref), profileKey(ref));
  }

  private async status(rec: FunctionRecord): Promise<FunctionStatus> {
    const ref = { name: rec.spec.service, namespace: rec.spec.namespace };
    const [desired, replicas] = await Promise.all([this.registry.desired(ref), this.registry.replicas(ref)]);
    const { spec } = rec;
    const s: FunctionStatus = {
      name: spec.service,
      image: spec.image,
      namespace: spec.namespace,
      labels: spec.labels,
      annotations: spec.annotations,
      replicas: desired,
      availableReplicas: replicas.filter((r) => r.state === 'ready').length,
      createdAt: rec.createdAt,
      kind: rec.kind,
    };
    if (spec.envProcess !== undefined) s.envProcess = spec.envProcess;
    if (Object.keys(spec.envVars).length) s.envVars = spec.envVars;
    if (spec.constraints) s.constraints = spec.constraints;
    if (spec.secrets) s.secrets = spec.secrets;
    if (spec.limits) s.limits = spec.limits;
    if (spec.requests) s.requests = spec.requests;
    if (spec.readOnlyRootFilesystem !== undefined) s.readOnlyRootFilesystem = spec.readOnlyRootFilesystem;
    return s;
  }

  async get(ref: FunctionRef): Promise<FunctionStatus | undefined> {
    const rec = await this.registry.get(ref);
    return rec ? this.status(rec) : undefined;
  }

  async list(namespace?: string): Promise<FunctionStatus[]> {
    return Promise.all((await this.registry.list(namespace)).map((r) => this.status(r)));
  }

  private async mustExist(ref: FunctionRef): Promise<FunctionRecord> {
    const rec = await this.registry.get(ref);
    if (!rec) throw notFound(`function ${ref.name}.${ref.namespace} not found`);
    return rec;
  }

  async scale(ref: FunctionRef, replicas: number, remove: string[] = []): Promise<void> {
    const rec = await this.mustExist(ref);
    if (remove.length) await this.redis.multi().sadd(keys.evict(ref), ...remove).expire(keys.evict(ref), 300).exec();
    await this.registry.setDesired(ref, rec.kind === 'training' ? 0 : replicas);
  }

  async wake(ref: FunctionRef): Promise<void> {
    const rec = await this.mustExist(ref);
    if (rec.kind === 'training') return;
    await this.registry.setDesiredIfZero(ref, 1);
  }

  private async setSetting(ref: FunctionRef, replicaId: string, patch: { quota?: number; limit?: number; weight?: number; smShare?: number }) {
    await this.mustExist(ref);
    const known = (await this.registry.replicas(ref)).some((r) => r.id === replicaId);
    if (!known) throw notFound(`replica ${replicaId} of ${ref.name}.${ref.namespace} not found`);
    const key = replicaSettingsKey(ref);
    const cur = JSON.parse((await this.redis.hget(key, replicaId)) ?? '{}') as { quota?: number; weight?: number; smShare?: number };
    await this.redis.hset(key, replicaId, JSON.stringify({ ...cur, ...patch }));
    await this.registry.feed.publish({ kind: 'replicas', key: `${ref.namespace}/${ref.name}` });
  }

  /** The node agent applies both: cpu.shares ∝ quota and CFS bandwidth = limit (or tokend's request/limit). */
  async setQuota(ref: FunctionRef, replicaId: string, quota: number, limit?: number): Promise<void> {
    if (!(quota > 0 && quota <= 1)) throw invalid('quota', `${quota} must be in (0, 1]`);
    if (limit !== undefined && !(limit >= quota && limit <= 1)) throw invalid('limit', `${limit} must be in [quota ${quota}, 1]`);
    await this.setSetting(ref, replicaId, { quota, limit: limit ?? quota });
  }

  /**
   * Recorded per replica like a quota; the agent replaces a GPU replica running at another share
   * where MPS enforces it (share-replacer.ts). Where it is not enforced it is refused: a share
   * that changes nothing must not look applied.
   */
  async setSmShare(ref: FunctionRef, replicaId: string, smShare: number): Promise<void> {
    if (!(smShare > 0 && smShare <= 1)) throw invalid('smShare', `${smShare} must be in (0, 1]`);
    const gpu = (await this.declaredEnforcement()).gpu;
    if (gpu?.smShare !== 'mps') throw invalid('smShare', `SM shares are not enforced here (${gpu?.summary ?? 'no GPU'})`);
    await this.setSetting(ref, replicaId, { smShare });
  }

  async setWeight(ref: FunctionRef, replicaId: string, weight: number): Promise<void> {
    if (!(weight > 0 && Number.isFinite(weight))) throw invalid('weight', `${weight} must be a positive number`);
    await this.setSetting(ref, replicaId, { weight });
  }

  async endpoints(ref: FunctionRef): Promise<ReplicaInfo[]> {
    const [replicas, settings] = await Promise.all([this.registry.replicas(ref), this.redis.hgetall(replicaSettingsKey(ref))]);
    return replicas.map((r) => (settings[r.id] ? { ...r, ...(JSON.parse(settings[r.id]) as object) } : r));
  }

  capability(ref: FunctionRef): Promise<CapabilityProfile | undefined> {
    return readProfile(this.redis, ref);
  }

  logs(ref: FunctionRef, q: LogQuery): AsyncIterable<LogLine> {
    return readLogs(this.redis, ref, q);
  }

  async namespaces(): Promise<string[]> {
    const [fns, known] = await Promise.all([this.redis.hkeys(keys.functions), this.redis.smembers(keys.namespaces)]);
    return [...new Set([DEFAULT_NAMESPACE, ...known.sort(), ...fns.map((k) => parseRefKey(k).namespace)])];
  }

  watch(l: ChangeListener): Promise<() => void> {
    return this.registry.feed.subscribe(l);
  }

  async close(): Promise<void> {
    await this.registry.feed.close();
  }
}
