import type Redis from 'ioredis';
import { FunctionRef, refKey } from '../lib/names';

/**
 * A manual scale (`faas-cli scale`, `POST /system/scale-function`) pins the function's replica
 * count for a hold window: the autoscaler keeps that count until the key expires, then resumes.
 * The window is `mlfaas.autoscaler.manual-hold` (label or annotation: seconds or a Go duration like
 * `10m`), else MLFAAS_MANUAL_SCALE_HOLD_S (seconds), else 5 minutes. 0 disables the pin.
 */
export interface ManualPin {
  replicas: number;
  /** ms since the epoch */
  at: number;
  until: number;
}

export const MANUAL_HOLD_KEY = 'mlfaas.autoscaler.manual-hold';
const DEFAULT_HOLD_S = 300;
const key = (r: FunctionRef) => `mlfaas:autoscaler:manual:${refKey(r)}`;

/** Go duration (`300ms`, `30s`, `15m`, `1h30m`) or plain seconds, in ms; undefined if malformed. */
export function parseDurationMs(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const s = raw.trim();
  if (/^\d+(\.\d+)?$/.test(s)) return Number(s) * 1000;
  if (s === '' || !/^(\d+(\.\d+)?(ms|s|m|h))+$/.test(s)) return undefined;
  const unit: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
  let ms = 0;
  for (const m of s.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g)) ms += Number(m[1]) * unit[m[2]];
  return ms;
}

/** The hold window for a function, ms (annotation > label > env > 5 min). */
export function manualHoldMs(labels: Record<string, string>, annotations: Record<string, string>, env: NodeJS.ProcessEnv = process.env): number {
  const own = parseDurationMs(annotations[MANUAL_HOLD_KEY] ?? labels[MANUAL_HOLD_KEY]);
  if (own !== undefined) return own;
  const s = Number(env.MLFAAS_MANUAL_SCALE_HOLD_S);
  return (env.MLFAAS_MANUAL_SCALE_HOLD_S !== undefined && Number.isFinite(s) && s >= 0 ? s : DEFAULT_HOLD_S) * 1000;
}

/** Pins `replicas` until now + holdMs (a Redis key with that TTL); no pin when holdMs is 0. */
export async function pinReplicas(redis: Redis, ref: FunctionRef, replicas: number, holdMs: number, now = Date.now()): Promise<ManualPin | undefined> {
  if (!(holdMs > 0)) {
    await redis.del(key(ref));
    return undefined;
  }
  const pin: ManualPin = { replicas, at: now, until: now + holdMs };
  await redis.set(key(ref), JSON.stringify(pin), 'PX', Math.ceil(holdMs));
  return pin;
}

/** The function's pin, if one holds. */
export async function readPin(redis: Redis, ref: FunctionRef): Promise<ManualPin | undefined> {
  const raw = await redis.get(key(ref));
  return raw ? (JSON.parse(raw) as ManualPin) : undefined;
}

export async function clearPin(redis: Redis, ref: FunctionRef): Promise<void> {
  await redis.del(key(ref));
}
