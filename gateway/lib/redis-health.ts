import type Redis from 'ioredis';

/** Reconnect quickly once Redis is back: 50 ms, 100 ms, … capped at 1 s. */
const retryStrategy = (times: number) => Math.min(50 * times, 1000);

/**
 * ioredis options for the request path: a command fails at once while Redis is unreachable
 * (no offline queue), fails after `commandTimeoutMs` when Redis does not answer, and is never
 * sent again after a reconnect. A request answered with an error has therefore changed nothing
 * later (a write in flight when the connection dropped may or may not have run, as always).
 */
export function failFastOptions(commandTimeoutMs: number): Record<string, unknown> {
  return {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
    commandTimeout: commandTimeoutMs,
    connectTimeout: Math.max(commandTimeoutMs, 1000),
    retryStrategy,
  };
}

/**
 * ioredis options for background work that must survive an outage (BullMQ workers, pub/sub
 * subscribers, blocking reads, the agent's own state): commands wait for the connection and
 * are sent when it is back. BullMQ requires `maxRetriesPerRequest: null` for its workers.
 */
export const PATIENT_OPTIONS: Record<string, unknown> = {
  enableOfflineQueue: true,
  maxRetriesPerRequest: null,
  autoResendUnfulfilledCommands: true,
  commandTimeout: undefined,
  retryStrategy,
};

/** A second connection to the same Redis with {@link PATIENT_OPTIONS} (whatever `redis` uses). */
export function patientDuplicate(redis: Redis): Redis {
  const r = redis.duplicate(PATIENT_OPTIONS);
  r.on('error', () => undefined);
  return r;
}

/** Resolves once `redis` is ready; rejects after `timeoutMs` (a fail-fast client refuses commands before). */
export function waitForRedis(redis: Redis, timeoutMs: number): Promise<void> {
  if (redis.status === 'ready') return Promise.resolve();
  return new Promise((resolve, reject) => {
    const done = (e?: Error) => {
      clearTimeout(t);
      redis.off('ready', onReady);
      if (e) reject(e);
      else resolve();
    };
    const onReady = () => done();
    const t = setTimeout(() => done(new Error(`redis unavailable: not connected after ${timeoutMs} ms`)), timeoutMs);
    redis.on('ready', onReady);
  });
}

const UNAVAILABLE = [
  "Stream isn't writeable",
  'Connection is closed',
  'Command aborted due to connection close', // a pipeline or transaction in flight when Redis died
  'Command timed out',
  'Reached the max retries per request limit',
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
];

/** Whether `e` says Redis could not be reached (as opposed to a command Redis rejected). */
export function isRedisUnavailable(e: unknown): boolean {
  if (!(e instanceof Error)) return false;
  if (e.name === 'MaxRetriesPerRequestError') return true;
  return UNAVAILABLE.some((m) => e.message.includes(m));
}

/**
 * Redis refused a write because it cannot persist it: its AOF write failed (`MISCONF`, a full
 * disk), it is out of memory (`OOM command not allowed`), the embedded server refuses writes
 * while its disk is full (`NOREPLICAS`, see `storage-guard.ts`), or the error names ENOSPC.
 */
export function isStorageFull(e: unknown): boolean {
  if (!(e instanceof Error)) return false;
  // a transaction refused at EXEC carries its commands' own errors (ioredis: previousErrors)
  const previous = (e as { previousErrors?: unknown[] }).previousErrors ?? [];
  return /\bMISCONF\b|\bOOM command not allowed\b|\bNOREPLICAS\b|\bENOSPC\b|No space left on device/.test(e.message) || previous.some(isStorageFull);
}

/** Redis answers PING within `timeoutMs`; otherwise the reason, in words. */
export async function checkRedis(redis: Redis, timeoutMs: number): Promise<{ ok: true } | { ok: false; reason: string }> {
  if (redis.status !== 'ready') return { ok: false, reason: `connection ${redis.status}` };
  let t: NodeJS.Timeout | undefined;
  try {
    const pong = await Promise.race([
      redis.ping(),
      new Promise<never>((_, rej) => (t = setTimeout(() => rej(new Error(`no PING answer in ${timeoutMs} ms`)), timeoutMs))),
    ]);
    return pong === 'PONG' ? { ok: true } : { ok: false, reason: `PING answered ${String(pong)}` };
  } catch (e) {
    return { ok: false, reason: (e as Error).message };
  } finally {
    clearTimeout(t);
  }
}
