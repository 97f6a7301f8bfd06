/**
 * Free GPUs over future time as a piecewise-constant timeline starting at the round's `now`: the
 * "forward board" that plans are reserved on (ElasticFlow's `future_free_gpus`, FaPES-Board's
 * occupancy). Breakpoints sit on the slot grid `now + k·slot`; the last segment runs to infinity.
 */
import type { PlanStep, Seconds } from './types';

export interface FreeGpuTimeline {
  readonly now: Seconds;
  readonly capacity: number;
  /** Segment starts, ascending; times[0] = now. Segment i is [times[i], times[i+1]) (last: to ∞). */
  readonly times: number[];
  /** Free GPUs in segment i. */
  readonly free: number[];
}

export function createFreeGpuTimeline(now: Seconds, capacity: number): FreeGpuTimeline {
  return { now, capacity, times: [now], free: [Math.max(0, capacity)] };
}

export function cloneFreeGpuTimeline(b: FreeGpuTimeline): FreeGpuTimeline {
  return { now: b.now, capacity: b.capacity, times: b.times.slice(), free: b.free.slice() };
}

/** Index of the segment containing t (t ≥ now). */
export function segmentAt(b: FreeGpuTimeline, t: Seconds): number {
  let lo = 0;
  let hi = b.times.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (b.times[mid] <= t) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** Free GPUs at time t. */
export function freeAt(b: FreeGpuTimeline, t: Seconds): number {
  return b.free[segmentAt(b, t)];
}

/** Ensures a breakpoint at t and returns its index. */
function splitAt(b: FreeGpuTimeline, t: Seconds): number {
  const i = segmentAt(b, t);
  if (b.times[i] === t) return i;
  b.times.splice(i + 1, 0, t);
  b.free.splice(i + 1, 0, b.free[i]);
  return i + 1;
}

/** Subtracts `gpus` on [from, to). Throws if the board would go negative (a planning bug). */
export function take(b: FreeGpuTimeline, from: Seconds, to: Seconds, gpus: number): void {
  if (gpus <= 0 || to <= from) return;
  const i = splitAt(b, from);
  const j = to === Infinity ? b.times.length : splitAt(b, to);
  for (let k = i; k < j; k++) {
    b.free[k] -= gpus;
    if (b.free[k] < 0) throw new Error(`board overcommitted at ${b.times[k]}: ${b.free[k]}`);
  }
}

/** Reserves a plan's steps; the last step runs until `until`. */
export function reserve(b: FreeGpuTimeline, steps: readonly PlanStep[], until: Seconds): void {
  for (let k = 0; k < steps.length; k++) {
    const end = k + 1 < steps.length ? steps[k + 1].from : until;
    take(b, steps[k].from, Math.min(end, until), steps[k].gpus);
  }
}

/** Rounds t up to the slot grid that starts at `origin`. */
export function alignUp(origin: Seconds, t: Seconds, slot: Seconds): Seconds {
  if (t <= origin) return origin;
  return origin + Math.ceil((t - origin) / slot - 1e-9) * slot;
}

/** Rounds t down to the slot grid that starts at `origin`. */
export function alignDown(origin: Seconds, t: Seconds, slot: Seconds): Seconds {
  if (t <= origin) return origin;
  return origin + Math.floor((t - origin) / slot + 1e-9) * slot;
}
