import type Redis from 'ioredis';
import { ErrorCode, invalid, notFound, PlatformError } from '../errors';
import { checkDnsLabel } from '../lib/names';
import type { Secret, SecretStore } from '../providers/function-provider';
import { HSET_IF_EXISTS, keys } from './keys';

/** Validates a secrets request body (`{name, namespace?, value?, rawValue?}`). */
export function parseSecret(body: unknown, defaultNamespace: string, needValue: boolean): Secret {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw invalid('body', 'must be a JSON object');
  const b = body as Record<string, unknown>;
  const name = checkDnsLabel(b.name, 'name');
  const namespace = b.namespace === undefined || b.namespace === '' ? defaultNamespace : checkDnsLabel(b.namespace, 'namespace');
  if (b.value !== undefined && typeof b.value !== 'string') throw invalid('value', 'must be a string');
  if (b.rawValue !== undefined && (typeof b.rawValue !== 'string' || !/^[A-Za-z0-9+/]*={0,2}$/.test(b.rawValue))) {
    throw invalid('rawValue', 'must be a base64 string');
  }
  if (needValue && b.value === undefined && b.rawValue === undefined) throw invalid('value', 'value or rawValue is required');
  const s: Secret = { name, namespace };
  if (b.value !== undefined) s.value = b.value as string;
  if (b.rawValue !== undefined) s.rawValue = b.rawValue as string;
  return s;
}

/** Secrets in Redis, one hash per namespace; values are stored base64 (raw bytes preserved). */
export class RedisSecretStore implements SecretStore {
  constructor(private readonly redis: Redis) {}

  private static encode(s: Secret): string {
    return s.rawValue ?? Buffer.from(s.value ?? '', 'utf8').toString('base64');
  }

  async list(namespace: string) {
    const names = await this.redis.hkeys(keys.secrets(namespace));
    return names.sort().map((name) => ({ name, namespace }));
  }

  async create(s: Secret): Promise<void> {
    const ok = await this.redis.hsetnx(keys.secrets(s.namespace), s.name, RedisSecretStore.encode(s));
    await this.redis.sadd(keys.namespaces, s.namespace);
    if (ok !== 1) throw new PlatformError(ErrorCode.Conflict, `secret with the name "${s.name}" already exists`, 'name');
  }

  async update(s: Secret): Promise<void> {
    const ok = await this.redis.eval(
      HSET_IF_EXISTS,
      1,
      keys.secrets(s.namespace),
      s.name,
      RedisSecretStore.encode(s),
    );
    if (ok !== 1) throw notFound(`secret "${s.name}" not found in namespace ${s.namespace}`);
  }

  async remove(name: string, namespace: string): Promise<void> {
    if ((await this.redis.hdel(keys.secrets(namespace), name)) !== 1) {
      throw notFound(`secret "${name}" not found in namespace ${namespace}`);
    }
  }

  /** base64 value, for mounting into replicas. */
  async read(namespace: string, name: string): Promise<string | undefined> {
    return (await this.redis.hget(keys.secrets(namespace), name)) ?? undefined;
  }
}
