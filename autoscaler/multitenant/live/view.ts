/**
 * Pure conversions from what the live platform stores (per-second counters, replicas, the
 * capability profile, the function's labels) to the fixed-cluster controller's JobView.
 */
import type { SecondCounters } from '../../../gateway/metrics/second-window';
import type { CapabilityProfile } from '../../../gateway/providers/capability-profile';
import { percentileFromHistogram } from '../../inference/histogram';
import type { JobView } from '../types';

/**
 * Requests per completed minute, from per-second arrivals (the controller's predictor input). Each
 * second is added once (the book remembers the last one read); at most `keep` minutes are kept.
 */
export class MinuteBook {
  private readonly done: number[] = [];
  private minute?: number;
  private count = 0;
  private lastSec = -Infinity;

  constructor(private readonly keep = 360) {}

  /** Adds the arrivals of seconds not seen yet, in order. */
  add(secs: ReadonlyMap<number, { arrivals: number }>, upToSec: number): void {
    // the first call starts at its first second (that minute is a partial one), later ones after the last read
    const first = this.lastSec === -Infinity ? Math.min(upToSec, ...secs.keys()) : this.lastSec + 1;
    const from = Math.max(first, upToSec - 600);
    for (let s = from; s <= upToSec; s++) {
      const m = Math.floor(s / 60);
      if (this.minute === undefined) this.minute = m;
      while (this.minute < m) {
        this.done.push(this.count);
        this.count = 0;
        this.minute++;
      }
      this.count += secs.get(s)?.arrivals ?? 0;
    }
    if (this.done.length > this.keep) this.done.splice(0, this.done.length - this.keep);
    this.lastSec = Math.max(this.lastSec, upToSec);
  }

  counts(): readonly number[] {
    return this.done;
  }
}

/**
 * A replica's per-request time at quota 1 (Faro's p), ms, from the capability profile: batch 1 at
 * quota 1 where measured, else the fastest batch-1 point scaled to quota 1 (a time quota q serves in
 * latency / q). Undefined without a usable point.
 */
export function processingMsOf(p: CapabilityProfile | undefined): number | undefined {
  const pts = (p?.points ?? []).filter((x) => x.batch === 1 && x.latencyMs > 0 && Number.isFinite(x.latencyMs) && x.quota > 0);
  if (pts.length === 0) return undefined;
  const whole = pts.find((x) => x.quota === 1 && x.smShare === 1);
  return whole ? whole.latencyMs : Math.min(...pts.map((x) => x.latencyMs * x.quota));
}

export interface JobInput {
  name: string;
  processingMs: number;
  sloMs: number;
  sloPercentile: number;
  /** Desired replicas now. */
  replicas: number;
  readyReplicas: number;
  quota: number;
  minuteCounts: readonly number[];
  /** The window's seconds (the last complete one last), by second. */
  window: ReadonlyMap<number, SecondCounters>;
  windowS: number;
  /** The last complete second (its gauges are the queue and in-flight now). */
  lastSec: number;
  /** Seconds since the previous tick, for `droppedLastTick`. */
  tickS: number;
}

/** The controller's view of one function at a tick. */
export function jobView(i: JobInput): JobView {
  let arrivals = 0;
  let completions = 0;
  let latencySum = 0;
  let dropped = 0;
  const buckets: number[] = [];
  for (const [sec, c] of i.window) {
    arrivals += c.arrivals;
    completions += c.completions;
    latencySum += c.latencySumMs;
    c.buckets.forEach((n, b) => (buckets[b] = (buckets[b] ?? 0) + n));
    if (sec > i.lastSec - i.tickS) dropped += c.dropped;
  }
  const last = i.window.get(i.lastSec);
  return {
    name: i.name,
    processingMs: i.processingMs,
    sloMs: i.sloMs,
    sloPercentile: i.sloPercentile,
    replicas: i.replicas,
    readyReplicas: i.readyReplicas,
    quota: i.quota,
    minuteCounts: i.minuteCounts,
    queueLength: last?.queue ?? 0,
    inFlight: last?.inflight ?? 0,
    recentLatencyMs: {
      mean: completions > 0 ? latencySum / completions : NaN,
      pct: completions > 0 ? percentileFromHistogram(buckets, i.sloPercentile) : NaN,
      windowS: i.windowS,
    },
    droppedLastTick: dropped,
    arrivalRps: arrivals / i.windowS,
  };
}
