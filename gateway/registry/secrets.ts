import type Redis from 'ioredis';
import { ErrorCode, invalid, notFound, PlatformError } from '../errors';
import { checkDnsLabel } from '../lib/names';
import type { Secret, SecretStore } from '../providers/function-provider';
import { HSET_IF_EXISTS, keys } from './keys';

/** Bytes of a valid UTF-8 sequence starting with lead byte `b0`, and the range of its second byte. */
function utf8Lead(b0: number): [number, number, number] | undefined {
  if (b0 >= 0xc2 && b0 <= 0xdf) return [2, 0x80, 0xbf];
  if (b0 === 0xe0) return [3, 0xa0, 0xbf];
  if (b0 === 0xed) return [3, 0x80, 0x9f];
  if (b0 >= 0xe1 && b0 <= 0xef) return [3, 0x80, 0xbf];
  if (b0 === 0xf0) return [4, 0x90, 0xbf];
  if (b0 >= 0xf1 && b0 <= 0xf3) return [4, 0x80, 0xbf];
  if (b0 === 0xf4) return [4, 0x80, 0x8f];
  return undefined;
}

/**
 * `bytes` as Go's encoding/json puts them in a JSON string, as faas-cli does with a secret file's
 * bytes in `value` beside `rawValue`: valid UTF-8 as is, each byte of an invalid sequence as
 * U+FFFD (Go's rule: one per byte, unlike Node's decoder).
 */
export function asGoJsonString(bytes: Buffer): string {
  let out = '';
  for (let i = 0; i < bytes.length; ) {
    const b0 = bytes[i];
    if (b0 < 0x80) {
      out += String.fromCharCode(b0);
      i++;
      continue;
    }
    const lead = utf8Lead(b0);
    let ok = lead !== undefined && i + lead[0] <= bytes.length && bytes[i + 1] >= lead[1] && bytes[i + 1] <= lead[2];
    for (let k = 2; ok && k < lead![0]; k++) ok = bytes[i + k] >= 0x80 && bytes[i + k] <= 0xbf;
    if (ok) {
      out += bytes.toString('utf8', i, i + lead![0]);
      i += lead![0];
    } else {
      out += '\ufffd';
      i++;
    }
  }
  return out;
}

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
  // faas-cli's --from-file sends both, the same content; anything else is ambiguous
  if (b.value !== undefined && b.rawValue !== undefined && asGoJsonString(Buffer.from(b.rawValue as string, 'base64')) !== b.value) {
    throw invalid('rawValue', 'differs from value: send one of them (value as text, or rawValue as base64 bytes)');
  }
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
    // one transaction: a write refused half-way (a full disk) must not leave a secret the caller was told failed
    const res = await this.redis.multi().hsetnx(keys.secrets(s.namespace), s.name, RedisSecretStore.encode(s)).sadd(keys.namespaces, s.namespace).exec();
    const failed = res?.find(([e]) => e);
    if (!res || failed) throw failed?.[0] ?? new Error('the secret store refused the transaction');
    const ok = res[0][1];
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
