/**
 * Dilu's inference profiler, Hybrid Growth Search (HGSS; ASPLOS'25 Sec. 3.2), as the artifact
 * runs it over recorded profiles (`profiling/inference/methods/HGSS_simulation.sh` over
 * `profiling/inference/observations/results/bs_sm_*.csv`, kept in
 * `../shared/data/latency/dilu_mps/`): a table of batch size × SM percentage → seconds per batch
 * and samples per second.
 *
 * 1. At batch 1, raise the SM percentage by 10 from 10 until a batch takes ≤ the QoS time.
 * 2. Then double the batch each step. A step within QoS is taken. A step over QoS tries 10 more SM
 *    percent once: taken if that meets QoS and its efficiency (samples/s per SM percent) has not
 *    dropped by more than 0.2 below the last taken step's; otherwise the search stops.
 * The result is the last taken step: the request SM share; the limit is twice it (the paper).
 * The search also stops where the table ends.
 */

export interface ProfileRow {
  readonly batch: number;
  /** SM percentage, 10..100. */
  readonly smPct: number;
  readonly latencyS: number;
  readonly throughput: number;
}

export interface HgssResult {
  /** Request, share of the GPU's SMs (0..1). */
  readonly request: number;
  /** Limit: twice the request, at most 1. */
  readonly limit: number;
  readonly batch: number;
  /** Samples/s per SM percent at the result. */
  readonly efficiency: number;
}

/** Parses a `bs_sm_*.csv` (header `batch_size,mps_active_thread_pct,latency_s_per_batch,throughput_samples_per_s`). */
export function parseProfile(text: string): ProfileRow[] {
  return text.trim().split('\n').slice(1).map((line) => {
    const [b, s, l, t] = line.split(',').map(Number);
    return { batch: b, smPct: s, latencyS: l, throughput: t };
  });
}

export function hgss(rows: readonly ProfileRow[], qosS: number): HgssResult | undefined {
  const at = (b: number, s: number) => rows.find((r) => r.batch === b && r.smPct === s);
  const eff = (r: ProfileRow) => r.throughput / r.smPct;
  let sm = 10;
  let row = at(1, sm);
  while (row && row.latencyS > qosS) {
    sm += 10;
    row = at(1, sm);
  }
  if (!row) return undefined;
  let best = row;
  let batch = 2;
  for (;;) {
    const cur = at(batch, sm);
    if (!cur) break;
    if (cur.latencyS > qosS) {
      sm += 10;
      const next = at(batch, sm);
      if (!next || next.latencyS > qosS || eff(next) < eff(best) - 0.2) break;
      best = next;
    } else {
      best = cur;
    }
    batch *= 2;
  }
  return { request: best.smPct / 100, limit: Math.min(1, (2 * best.smPct) / 100), batch: best.batch, efficiency: eff(best) };
}
