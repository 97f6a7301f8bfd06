import type Redis from 'ioredis';
import { CappedList } from '../lib/capped-list';
import { FunctionRef, refKey } from '../lib/names';

/**
 * One autoscaler decision's load forecast for a function (issue 26): what the live loop planned
 * for, the forecast's band and what it observed. Written by the autoscaler beside the scaling
 * events, read by `/system/overview` and `/system/forecasts` (the gateway never imports autoscaler/).
 */
export interface ForecastPoint {
  /** RFC3339: the decision's time. */
  at: string;
  /** The rate the decision provisioned for, req/s (hybrid: R). */
  rps: number;
  /** The forecast's band (hybrid: its q0.1 and q0.9), req/s. */
  lo: number;
  hi: number;
  /** The forecast's mean, req/s. */
  mean?: number;
  /** The rate observed over the interval the decision answers, req/s. */
  observed: number;
  /** What forecast, e.g. `kalman q0.9`. */
  label?: string;
}

/** Points kept per function (10 minutes at one decision a second). */
export const FORECASTS_KEPT = 600;
/** A function's list expires this long after its last point, s (a deleted function's goes by itself). */
export const FORECASTS_TTL_S = 3600;

const listKey = (r: FunctionRef) => `mlfaas:forecasts:${refKey(r)}`;
const r3 = (x: number) => Math.round(x * 1000) / 1000;

/** A stored point, or undefined for anything that is not one (a stray value is skipped, never a 5xx). */
function parse(raw: string): ForecastPoint | undefined {
  try {
    const p = JSON.parse(raw) as ForecastPoint;
    const nums = [p.rps, p.lo, p.hi, p.observed].every((x) => typeof x === 'number' && Number.isFinite(x));
    return nums && typeof p.at === 'string' ? p : undefined;
  } catch {
    return undefined;
  }
}

/** The last FORECASTS_KEPT forecasts per function in Redis, newest first, expiring. */
export class Forecasts {
  private readonly store: CappedList<ForecastPoint>;

  constructor(redis: Redis) {
    this.store = new CappedList(redis, FORECASTS_KEPT, parse, FORECASTS_TTL_S);
  }

  async record(ref: FunctionRef, p: ForecastPoint): Promise<void> {
    const point: ForecastPoint = { at: p.at, rps: r3(p.rps), lo: r3(p.lo), hi: r3(p.hi), observed: r3(p.observed),
      ...(p.mean !== undefined ? { mean: r3(p.mean) } : {}), ...(p.label !== undefined ? { label: p.label } : {}) };
    await this.store.push(listKey(ref), point);
  }

  /** Newest first, at most `limit` (1..FORECASTS_KEPT). */
  async list(ref: FunctionRef, limit = FORECASTS_KEPT): Promise<ForecastPoint[]> {
    return this.store.range(listKey(ref), limit);
  }

  async latest(ref: FunctionRef): Promise<ForecastPoint | undefined> {
    return (await this.list(ref, 1))[0];
  }

  async remove(ref: FunctionRef): Promise<void> {
    await this.store.remove(listKey(ref));
  }
}
