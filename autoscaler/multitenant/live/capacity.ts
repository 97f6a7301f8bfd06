/**
 * The runner's own guard of the fixed cluster (pure): whatever the controller decided, the
 * allocation applied keeps Σ replicas × quota ≤ capacity and every function within its
 * min_scale / max_scale. A decision over the capacity is scaled down (every quota by the same
 * factor) and the note says so, loudly, in the event's reason and the tick report.
 */
import type { ControllerDecision, JobView } from '../types';

export interface Target {
  replicas: number;
  quota: number;
  /** In [0, 1]. */
  acceptRate: number;
}

export interface Bounds {
  minScale: number;
  maxScale: number;
}

/** The smallest quota the runner applies (a CFS period's slice any replica needs to make progress). */
export const MIN_QUOTA = 0.01;

const floor4 = (x: number) => Math.floor(x * 1e4 + 1e-9) / 1e4;

/**
 * Each job's target: the decision's fields where given, else the current ones (accept rate:
 * `accept[i]`), replicas clamped to [max(1, min_scale), max_scale] (a function in the cluster keeps
 * a replica: one at zero is not in the view), quota to [MIN_QUOTA, 1]. Notes name every clamp.
 */
export function resolveTargets(jobs: readonly JobView[], d: ControllerDecision | null, bounds: readonly Bounds[],
  accept: readonly number[]): { targets: Target[]; notes: string[] } {
  const notes: string[] = [];
  const targets = jobs.map((j, i) => {
    const a = d?.jobs[i] ?? null;
    const want = Math.round(a?.replicas ?? j.replicas);
    const lo = Math.max(1, bounds[i].minScale);
    const replicas = Math.min(Math.max(want, lo), Math.max(lo, bounds[i].maxScale));
    if (replicas !== want) notes.push(`${j.name}: ${want} replicas clamped to ${replicas} (min_scale ${bounds[i].minScale}, max_scale ${bounds[i].maxScale})`);
    const q = a?.quota ?? j.quota;
    const quota = floor4(Math.min(Math.max(Number.isFinite(q) ? q : 1, MIN_QUOTA), 1));
    const r = a?.acceptRate ?? accept[i] ?? 1;
    return { replicas, quota, acceptRate: Math.min(Math.max(Number.isFinite(r) ? r : 1, 0), 1) };
  });
  return { targets, notes };
}

/** Σ replicas × quota. */
export const coresOf = (ts: readonly Target[]) => ts.reduce((s, t) => s + t.replicas * t.quota, 0);

/**
 * Targets within `capacity`: unchanged when they fit; otherwise every quota × capacity / Σ (rounded
 * down to 0.001, never below MIN_QUOTA), with a note. When even that does not fit (min_scale
 * replicas at MIN_QUOTA exceed the cluster), the note says the capacity cannot be kept.
 */
export function fitCapacity(ts: readonly Target[], capacity: number): { targets: Target[]; note?: string } {
  const total = coresOf(ts);
  if (total <= capacity + 1e-9) return { targets: ts.map((t) => ({ ...t })) };
  const f = capacity / total;
  const targets = ts.map((t) => ({ ...t, quota: Math.max(MIN_QUOTA, Math.floor(t.quota * f * 1e4) / 1e4) }));
  const after = coresOf(targets);
  // a rounding's overshoot (under 0.5 %) is trimmed without a word
  if (after <= capacity + 1e-9 && total <= capacity * 1.005) return { targets };
  const note = after <= capacity + 1e-9
    ? `RUNNER: the decision asked ${total.toFixed(2)} cores of a ${capacity}-core cluster: every quota scaled by ${f.toFixed(3)}`
    : `RUNNER: the decision asked ${total.toFixed(2)} cores of a ${capacity}-core cluster and even at quota ${MIN_QUOTA} ` +
      `the replicas hold ${after.toFixed(2)}: the cluster is over capacity (min_scale too high for it)`;
  return { targets, note };
}

/**
 * Quota changes smaller than `step` are skipped (a controller that re-divides the cluster every
 * tick would otherwise move every replica by 0.01 each second, an event each), unless skipping
 * them would leave the cluster over its capacity.
 */
export function damp(ts: readonly Target[], current: readonly number[], capacity: number, step = 0.02): Target[] {
  const kept = ts.map((t, i) => (Math.abs(t.quota - current[i]) < step ? { ...t, quota: current[i] } : { ...t }));
  return coresOf(kept) <= capacity + 1e-9 ? kept : ts.map((t) => ({ ...t }));
}
