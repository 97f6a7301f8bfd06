/**
 * A function's <request, limit> quota (Dilu, issue 24): Dilu's HGSS search (the artifact's
 * `profiling/inference/methods/HGSS_simulation.sh`, ported in our words) over a latency surface
 * by batch × share, and the inference rule limit = 2 × request (capped at 1). Pure: the surface
 * is a lookup, measured (Dilu's MPS profiles, our CPU profile points) or interpolated.
 */
import type { ProfilePoint, RequestLimit } from '../../gateway/providers/capability-profile';

/** One point of the surface: batch latency (ms) and samples per second. */
export interface SurfacePoint {
  latencyMs: number;
  throughput: number;
}

/** The surface: undefined where nothing is known (past the largest batch or share). */
export type Surface = (batch: number, sharePct: number) => SurfacePoint | undefined;

/** HGSS's result: the share (percent) and batch it settled on, and each step it took. */
export interface HgssResult {
  sharePct: number;
  batch: number;
  /** throughput ÷ share percent at the result (the artifact's "efficiency") */
  efficiency: number;
  steps: string[];
}

/**
 * Dilu's HGSS. (1) At batch 1 raise the share from 10 % in 10 % steps until the batch latency is
 * at most `targetMs`; that is the first best (batch, share), and the batch doubles. (2) At each
 * doubled batch: within the target → it becomes the best, the batch doubles again; over it → try
 * the share + 10 % once: still over, or efficiency (throughput per share percent) below the last
 * best's minus 0.2 → stop with the best; else that is the best and the batch doubles. The search
 * also stops where the surface has no point (past its grid), keeping the best.
 */
export function hgss(surface: Surface, targetMs: number, startPct = 10, stepPct = 10): HgssResult | undefined {
  const steps: string[] = [];
  let share = startPct;
  let batch = 1;
  let first: SurfacePoint | undefined;
  for (; share <= 100; share += stepPct) {
    first = surface(batch, share);
    if (!first) return undefined;
    steps.push(`b${batch}@${share}%: ${first.latencyMs.toFixed(2)} ms`);
    if (first.latencyMs <= targetMs) break;
  }
  if (!first || first.latencyMs > targetMs) return undefined; // even the whole device misses the target
  let best = { sharePct: share, batch, efficiency: first.throughput / share };
  batch *= 2;
  for (;;) {
    const cur = surface(batch, share);
    if (!cur) break;
    steps.push(`b${batch}@${share}%: ${cur.latencyMs.toFixed(2)} ms`);
    if (cur.latencyMs <= targetMs) {
      best = { sharePct: share, batch, efficiency: cur.throughput / share };
      batch *= 2;
      continue;
    }
    share += stepPct;
    const next = surface(batch, share);
    if (!next) break;
    steps.push(`b${batch}@${share}%: ${next.latencyMs.toFixed(2)} ms (one share step up)`);
    const eff = next.throughput / share;
    if (next.latencyMs > targetMs || eff < best.efficiency - 0.2) break;
    best = { sharePct: share, batch, efficiency: eff };
    batch *= 2;
  }
  return { ...best, steps };
}

/** Dilu's inference rule: limit = 2 × request, capped at 1. */
export function inferenceLimit(request: number): number {
  return Math.min(1, 2 * request);
}

/**
 * The surface of a CPU profile: its measured points by batch, latency interpolated linearly in
 * 1 / quota between the measured quotas (CFS bandwidth stretches a batch by about 1 / quota), and
 * scaled by 1 / quota below the smallest measured one. Shares above the largest measured quota,
 * and batches not measured, have no point.
 */
export function profileSurface(points: readonly ProfilePoint[]): Surface {
  return (batch, sharePct) => {
    const q = sharePct / 100;
    const at = points.filter((p) => p.batch === batch).sort((a, b) => a.quota - b.quota);
    if (!at.length || q > at[at.length - 1].quota + 1e-9) return undefined;
    let latencyMs: number;
    const hi = at.findIndex((p) => p.quota >= q - 1e-9);
    if (hi === 0) latencyMs = at[0].latencyMs * (at[0].quota / q);
    else {
      const a = at[hi - 1];
      const b = at[hi];
      const w = (1 / q - 1 / b.quota) / (1 / a.quota - 1 / b.quota);
      latencyMs = b.latencyMs + w * (a.latencyMs - b.latencyMs);
    }
    return { latencyMs, throughput: (batch * 1000) / latencyMs };
  };
}

/**
 * A function's <request, limit> from its capability profile and latency SLO: HGSS over the
 * profile's surface with the batch latency held to SLO / 2 (Dilu: half the SLO for execution, the
 * rest for queueing), the request its share, the limit 2 × request. Undefined without an SLO, or
 * when even the whole device misses it.
 */
export function requestLimitOf(points: readonly ProfilePoint[], sloMs: number | undefined): RequestLimit | undefined {
  if (!(sloMs !== undefined && sloMs > 0)) return undefined;
  const r = hgss(profileSurface(points), sloMs / 2);
  if (!r) return undefined;
  const request = Math.round(r.sharePct) / 100;
  return { request, limit: inferenceLimit(request), batch: r.batch, sloMs };
}
