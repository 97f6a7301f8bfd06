/**
 * A function's own timeouts and async retry policy, as OpenFaaS has them (issue 25, part 5).
 * Pure: maps of strings in, validated values out; every error names its field.
 *
 * Timeouts (env, like OpenFaaS's watchdogs): `read_timeout`, `write_timeout`, `exec_timeout`,
 * each a Go duration (`30s`, `1m30s`, `250ms`) or, as the watchdogs also accept, a whole number
 * of seconds. `0` means "not set" (the gateway's global `MLFAAS_UPSTREAM_TIMEOUT_MS` applies).
 *
 * Retries (annotations, like OpenFaaS Pro's queue-worker): `com.openfaas.retry.attempts`,
 * `com.openfaas.retry.codes` (HTTP statuses, separated by commas or spaces),
 * `com.openfaas.retry.min_wait` and `com.openfaas.retry.max_wait` (Go durations).
 */
import { invalid } from '../errors';
import { GoDurationError, parseGoDurationNs } from '../lib/go-duration';

/** The timeouts a function set, ms; absent = not set. */
export interface FunctionTimeouts {
  /** `read_timeout`: reading the request body from the client (408 past it). */
  readMs?: number;
  /** `write_timeout`: the function writing its answer. */
  writeMs?: number;
  /** `exec_timeout`: the function's run. */
  execMs?: number;
}

export const TIMEOUT_KEYS = { readMs: 'read_timeout', writeMs: 'write_timeout', execMs: 'exec_timeout' } as const;

/** The longest per-function timeout accepted at deploy (a day: longer work is a training job). */
export const MAX_TIMEOUT_MS = 24 * 3600 * 1000;

/** A duration field: a Go duration, or whole seconds; ms. Throws a 400 naming `field`. */
export function durationField(raw: string, field: string, maxMs: number): number {
  const s = raw.trim();
  let ms: number;
  if (/^\d+$/.test(s)) ms = Number(s) * 1000;
  else {
    try {
      ms = Number(parseGoDurationNs(s)) / 1e6;
    } catch (e) {
      if (e instanceof GoDurationError) throw invalid(field, `${e.message} (a Go duration such as 30s, 1m30s or 250ms)`);
      throw e;
    }
  }
  if (ms < 0) throw invalid(field, `"${raw}" is negative`);
  if (ms > maxMs) throw invalid(field, `"${raw}" exceeds the limit of ${maxMs / 1000} s`);
  return ms;
}

/** Reads and validates the three timeouts from `envVars` (fields named `envVars.<key>`). */
export function parseFunctionTimeouts(envVars: Record<string, string> | undefined): FunctionTimeouts {
  const out: FunctionTimeouts = {};
  if (!envVars) return out;
  for (const [k, key] of Object.entries(TIMEOUT_KEYS) as Array<[keyof FunctionTimeouts, string]>) {
    const v = envVars[key];
    if (v === undefined) continue;
    const ms = durationField(v, `envVars.${key}`, MAX_TIMEOUT_MS);
    if (ms > 0) out[k] = ms;
  }
  return out;
}

/**
 * Extra time the gateway gives past `exec_timeout`, ms: a watchdog that enforces the function's
 * own limit answers its 504 first, and that answer (with its body) is the one the caller gets.
 */
export const EXEC_GRACE_MS = 500;

/**
 * The gateway's bound on one invocation of the function, ms: `exec_timeout` + grace where set,
 * else `write_timeout` + grace, else `fallbackMs` (MLFAAS_UPSTREAM_TIMEOUT_MS). It bounds the
 * wait for a replica slot and, separately, the replica's answer.
 */
export function invocationTimeoutMs(t: FunctionTimeouts | undefined, fallbackMs: number): number {
  if (t?.execMs) return t.execMs + EXEC_GRACE_MS;
  if (t?.writeMs) return t.writeMs + EXEC_GRACE_MS;
  return fallbackMs;
}

/** How async invocations of a function are retried when it answers one of `codes`. */
export interface RetryPolicy {
  /** Tries in all, the first included (1 = never retried). */
  attempts: number;
  /** Statuses from the function that are retried. */
  codes: number[];
  /** Wait before the first retry, ms; doubled each retry up to `maxWaitMs`. */
  minWaitMs: number;
  maxWaitMs: number;
}

export const RETRY_KEYS = {
  attempts: 'com.openfaas.retry.attempts',
  codes: 'com.openfaas.retry.codes',
  minWait: 'com.openfaas.retry.min_wait',
  maxWait: 'com.openfaas.retry.max_wait',
} as const;

/** OpenFaaS Pro's `httpRetryCodes` plus 503 (a replica's "not now"); the annotation replaces them. */
export const DEFAULT_RETRY_CODES = [408, 429, 500, 502, 503, 504];

/** Bounds: attempts of one job, and the longest wait between two. */
export const RETRY_BOUNDS = { attempts: 100, maxWaitMs: 3600 * 1000 } as const;

/**
 * The retry policy from a function's annotations over `defaults` (the gateway's
 * `MLFAAS_ASYNC_ATTEMPTS`, OpenFaaS Pro's initialRetryWait 10s and maxRetryWait 120s).
 * Throws a 400 naming `annotations.<key>`.
 */
export function parseRetryPolicy(annotations: Record<string, string> | undefined, defaults: RetryPolicy): RetryPolicy {
  const a = annotations ?? {};
  const p: RetryPolicy = { ...defaults, codes: [...defaults.codes] };
  const field = (k: string) => `annotations.${k}`;
  const attempts = a[RETRY_KEYS.attempts];
  if (attempts !== undefined) {
    const f = field(RETRY_KEYS.attempts);
    if (!/^\s*\d+\s*$/.test(attempts)) throw invalid(f, `"${attempts}" is not a whole number`);
    const n = Number(attempts);
    if (n < 1 || n > RETRY_BOUNDS.attempts) throw invalid(f, `${n} must be in [1, ${RETRY_BOUNDS.attempts}]`);
    p.attempts = n;
  }
  const codes = a[RETRY_KEYS.codes];
  if (codes !== undefined) p.codes = parseCodes(codes, field(RETRY_KEYS.codes));
  const min = a[RETRY_KEYS.minWait];
  if (min !== undefined) p.minWaitMs = durationField(min, field(RETRY_KEYS.minWait), RETRY_BOUNDS.maxWaitMs);
  const max = a[RETRY_KEYS.maxWait];
  if (max !== undefined) p.maxWaitMs = durationField(max, field(RETRY_KEYS.maxWait), RETRY_BOUNDS.maxWaitMs);
  if (p.minWaitMs > p.maxWaitMs) {
    // both set: the user's contradiction; one set: it wins over the gateway's default for the other
    if (min !== undefined && max !== undefined) {
      throw invalid(field(RETRY_KEYS.minWait), `min_wait ${p.minWaitMs} ms exceeds max_wait ${p.maxWaitMs} ms`);
    }
    if (min !== undefined) p.maxWaitMs = p.minWaitMs;
    else p.minWaitMs = p.maxWaitMs;
  }
  return p;
}

/** `"429, 502 503"` → [429, 502, 503]; each a status in 400..599; an empty list retries nothing. */
function parseCodes(raw: string, field: string): number[] {
  const parts = raw.split(/[\s,]+/).filter((s) => s !== '');
  const out: number[] = [];
  for (const s of parts) {
    if (!/^\d{3}$/.test(s)) throw invalid(field, `"${s}" is not an HTTP status code`);
    const n = Number(s);
    if (n < 400 || n > 599) throw invalid(field, `${n} is not an error status (400-599)`);
    if (!out.includes(n)) out.push(n);
  }
  return out;
}

/**
 * The wait before retry number `retry` (1 = the first retry), ms: min_wait doubled each retry,
 * capped at max_wait. A `Retry-After` of the function's (seconds, on a 429 or 503) replaces it,
 * never below min_wait nor above max_wait. Pure.
 */
export function retryDelayMs(p: Pick<RetryPolicy, 'minWaitMs' | 'maxWaitMs'>, retry: number, retryAfterS?: number): number {
  if (retryAfterS !== undefined && Number.isFinite(retryAfterS) && retryAfterS >= 0) {
    return Math.min(p.maxWaitMs, Math.max(p.minWaitMs, retryAfterS * 1000));
  }
  const exp = Math.min(30, Math.max(0, retry - 1));
  return Math.min(p.maxWaitMs, p.minWaitMs * 2 ** exp);
}

/** Validates both at deploy (called by `parseDeployment`); throws the first error. */
export function checkTimeoutsAndRetries(envVars: Record<string, string>, annotations: Record<string, string>): void {
  parseFunctionTimeouts(envVars);
  parseRetryPolicy(annotations, { attempts: 1, codes: DEFAULT_RETRY_CODES, minWaitMs: 0, maxWaitMs: RETRY_BOUNDS.maxWaitMs });
}
