/** What the client saw for one request. */
export interface Outcome {
  /** Scheduled send time, ms from the segment start. */
  at: number;
  /** End-to-end latency, ms (from the scheduled send, so client lag counts too). */
  latencyMs: number;
  /** HTTP status; 0 = the request failed without an answer (connection error, client timeout). */
  status: number;
}

export interface ViolationSummary {
  requests: number;
  /** Over the SLO, or answered non-2xx, or failed. */
  violations: number;
  /** 429 / 5xx / no answer: the platform refused or lost it. */
  dropped: number;
  p50: number;
  p99: number;
}

export const isDropped = (o: Outcome) => o.status === 0 || o.status === 429 || o.status >= 500;
export const isViolation = (o: Outcome, sloMs: number) => o.status < 200 || o.status >= 300 || o.latencyMs > sloMs;

/** Nearest-rank percentile of an ascending array (NaN when empty). Pure. */
export function pct(sorted: readonly number[], p: number): number {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] : NaN;
}

/** Violations, drops and percentiles of a function's outcomes against its SLO. Pure. */
export function summarise(outs: readonly Outcome[], sloMs: number): ViolationSummary {
  const lat = outs.filter((o) => o.status >= 200 && o.status < 300).map((o) => o.latencyMs).sort((a, b) => a - b);
  return {
    requests: outs.length,
    violations: outs.filter((o) => isViolation(o, sloMs)).length,
    dropped: outs.filter(isDropped).length,
    p50: pct(lat, 50),
    p99: pct(lat, 99),
  };
}

/** p99 latency per bin of `binMs` (failed requests count as +∞ → shown as NaN-free max). Pure. */
export function p99Series(outs: readonly Outcome[], binMs: number, bins: number): number[] {
  const per: number[][] = Array.from({ length: bins }, () => []);
  for (const o of outs) {
    const b = Math.floor(o.at / binMs);
    if (b >= 0 && b < bins) per[b].push(o.status >= 200 && o.status < 300 ? o.latencyMs : Infinity);
  }
  return per.map((xs) => {
    const v = pct(xs.sort((a, b) => a - b), 99);
    return Number.isFinite(v) ? v : xs.length ? Math.max(...xs.filter(Number.isFinite), 0) : 0;
  });
}

/** Violation counts below this are raised to it in ratios, so a zero denominator stays finite. */
export const VIOLATION_FLOOR = 1;

/** baseline ÷ ours with `floor` applied to both (k/0 = k/floor). Pure. */
export function ratio(baseline: number, ours: number, floor = 0): number {
  const b = Math.max(baseline, floor);
  const o = Math.max(ours, floor);
  return o > 0 ? b / o : NaN;
}

/**
 * baseline ÷ ours violation counts, or undefined when both are 0: 0 vs 0 says the load did not
 * tell the two policies apart ("no discrimination"), not that they are equal (a ratio of 1).
 * One side 0: it is floored at `floor`. Pure.
 */
export function violationRatio(baseline: number, ours: number, floor = VIOLATION_FLOOR): number | undefined {
  return baseline === 0 && ours === 0 ? undefined : ratio(baseline, ours, floor);
}

/** Mean, min and max of one figure over seeds (NaN when there is none). Pure. */
export interface OverSeeds {
  n: number;
  mean: number;
  min: number;
  max: number;
}
export function overSeeds(xs: readonly number[]): OverSeeds {
  const v = xs.filter(Number.isFinite);
  if (!v.length) return { n: 0, mean: NaN, min: NaN, max: NaN };
  return { n: v.length, mean: v.reduce((a, b) => a + b, 0) / v.length, min: Math.min(...v), max: Math.max(...v) };
}

/** `mean [min–max]` over seeds, `digits` decimals; one seed: the value alone. Pure. */
export function fmtSeeds(s: OverSeeds, digits = 2): string {
  if (!s.n) return 'n/a';
  return s.n === 1 ? s.mean.toFixed(digits) : `${s.mean.toFixed(digits)} [${s.min.toFixed(digits)}–${s.max.toFixed(digits)}]`;
}

/**
 * A per-seed violation ratio summarised over seeds for the results' last line: `no-discrimination`
 * when every seed had 0 vs 0; else `mean[min-max]` over the seeds that discriminated, with
 * `/k-of-n` when some did not (no spaces: the line is `key=value` pairs). Pure.
 */
export function fmtViolationRatios(perSeed: ReadonlyArray<number | undefined>): string {
  const told = perSeed.filter((x): x is number => x !== undefined);
  if (!told.length) return 'no-discrimination';
  const s = overSeeds(told);
  const body = s.n === 1 ? s.mean.toFixed(2) : `${s.mean.toFixed(2)}[${s.min.toFixed(2)}-${s.max.toFixed(2)}]`;
  return told.length < perSeed.length ? `${body}/${told.length}-of-${perSeed.length}` : body;
}

/** Fixed two decimals, or `n/a` for NaN / ±∞. Pure. */
export const fmt = (x: number) => (Number.isFinite(x) ? x.toFixed(2) : 'n/a');

/** Worst |predicted − measured| / measured over pairs (measured 0 skipped). Pure. */
export function worstRelError(pairs: ReadonlyArray<{ predicted: number; measured: number }>): number {
  let w = 0;
  for (const p of pairs) if (p.measured > 0) w = Math.max(w, Math.abs(p.predicted - p.measured) / p.measured);
  return w;
}

/** Seconds of the segment with violations, as `second:count`, in time order (a log line's worth). Pure. */
export function violationSeconds(outs: readonly Outcome[], sloMs: number, max = 24): string {
  const per = new Map<number, number>();
  for (const o of outs) if (isViolation(o, sloMs)) per.set(Math.floor(o.at / 1000), (per.get(Math.floor(o.at / 1000)) ?? 0) + 1);
  const all = [...per].sort((a, b) => a[0] - b[0]).map(([s, n]) => `${s}:${n}`);
  return all.length > max ? `${all.slice(0, max).join(' ')} …(+${all.length - max})` : all.join(' ');
}
