import type { ClusterView, JobView } from '../../multitenant/types';
import type { FaroSimConfig } from './config';
import type { ControlPlane } from './executor';
import type { JobPlane } from './job';

/**
 * What this simulator adds to a job's view (optional for other runners): whether the job's executor
 * is still carrying out an earlier action (the artifact's `is_working`, when its controllers skip the job).
 */
export interface FaroJobView extends JobView {
  readonly scaling?: boolean;
}

/** True when the runner says the job is still scaling (false when it does not say). */
export function isScaling(j: JobView): boolean {
  return (j as FaroJobView).scaling === true;
}

/**
 * Latencies (ms) of a job's requests that left the system in the last `windowS` seconds, by the time
 * they left. As the artifact's controller metric, dropped requests count too, with the (short) time
 * they spent before being turned away.
 */
export class JobWindow {
  private t = new Float64Array(1024);
  private v = new Float64Array(1024);
  private head = 0;
  private len = 0;
  private sum = 0;

  constructor(readonly windowS: number) {}

  add(t: number, latencyMs: number): void {
    if (this.len === this.t.length) this.grow();
    const i = (this.head + this.len) % this.t.length;
    this.t[i] = t;
    this.v[i] = latencyMs;
    this.len++;
    this.sum += latencyMs;
  }

  /** Drops entries that ended at or before now − windowS. */
  evict(now: number): void {
    const from = now - this.windowS;
    while (this.len > 0 && this.t[this.head] <= from) {
      this.sum -= this.v[this.head];
      this.head = (this.head + 1) % this.t.length;
      this.len--;
    }
    if (this.len === 0) this.sum = 0;
  }

  count(): number {
    return this.len;
  }

  mean(): number {
    return this.len > 0 ? this.sum / this.len : NaN;
  }

  /** The p-th percentile (linear interpolation), NaN when empty. */
  percentile(p: number): number {
    if (this.len === 0) return NaN;
    const a = new Float64Array(this.len);
    for (let i = 0; i < this.len; i++) a[i] = this.v[(this.head + i) % this.t.length];
    a.sort();
    const pos = (p / 100) * (a.length - 1);
    const lo = Math.floor(pos);
    const hi = Math.min(lo + 1, a.length - 1);
    return a[lo] + (a[hi] - a[lo]) * (pos - lo);
  }

  private grow(): void {
    const m = this.t.length * 2;
    const t = new Float64Array(m);
    const v = new Float64Array(m);
    for (let i = 0; i < this.len; i++) {
      t[i] = this.t[(this.head + i) % this.t.length];
      v[i] = this.v[(this.head + i) % this.t.length];
    }
    this.t = t;
    this.v = v;
    this.head = 0;
  }
}

/** The controller's view at `nowS`; the percentile is computed only if the controller reads it. */
export function buildView(
  nowS: number,
  cfg: FaroSimConfig,
  names: readonly string[],
  planes: readonly JobPlane[],
  control: ControlPlane,
  windows: readonly JobWindow[],
  minuteCounts: readonly number[][],
  arrivalsWin?: readonly JobWindow[],
): ClusterView {
  const completed = Math.floor(nowS / 60 + 1e-9);
  const jobs: FaroJobView[] = planes.map((p, j) => {
    const w = windows[j];
    w.evict(nowS);
    const mc = minuteCounts[j];
    const counts = mc.slice(0, completed);
    while (counts.length < completed) counts.push(0);
    let pct: number | undefined;
    const recent = {
      mean: w.mean(),
      windowS: w.windowS,
      get pct(): number {
        if (pct === undefined) pct = w.percentile(cfg.sloPercentile);
        return pct;
      },
    };
    const aw = arrivalsWin?.[j];
    aw?.evict(nowS);
    return {
      name: names[j] ?? `job${j}`,
      processingMs: cfg.processingMs,
      sloMs: cfg.sloMs,
      sloPercentile: cfg.sloPercentile,
      replicas: p.replicas.length + control.startingReplicas(j),
      readyReplicas: p.replicas.length,
      quota: p.quota,
      minuteCounts: counts,
      queueLength: p.queueLength,
      inFlight: p.inFlight,
      recentLatencyMs: recent,
      droppedLastTick: p.droppedSinceTick,
      scaling: control.isWorking(j),
      ...(aw === undefined ? {} : { arrivalRps: aw.count() / Math.min(aw.windowS, Math.max(nowS, 1e-9)) }),
    };
  });
  return { nowS, capacity: cfg.capacity, jobs };
}
