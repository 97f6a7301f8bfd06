/**
 * The client-side figures of one run (issue 24), as Faro's analysis counts them
 * (autoscaler/sim/faro/metrics.ts analyzeFaro): requests binned by arrival window per function;
 * each window's p99 (linear interpolation) gives the utility min(SLO / p99, 1), a dropped or failed
 * request counting as infinitely late; lost utility = Σ_functions (1 − mean utility over its windows).
 */
import { quantileSorted } from '../../autoscaler/sim/faro/metrics';

/** One request's outcome at the client: latency ms when served (200), else dropped (429) or failed (anything else). */
/** A dropped or failed request's latency: the largest double, as analyzeFaro (so the interpolation never meets ∞ − ∞). */
export const DROPPED_MS = Number.MAX_VALUE;

export interface Outcome { fn: number; t: number; ms?: number; status: number }

export interface WindowStat { fn: number; window: number; n: number; dropped: number; failed: number; p99Ms: number; withinSlo: number; utility: number }

export interface RunStats {
  windows: WindowStat[];
  /** Σ_fn (1 − its mean window utility). */
  lostUtility: number;
  /** Per function: mean window utility, fraction within SLO (of all its requests), drops, failures, requests. */
  perFn: Array<{ utility: number; withinSlo: number; dropped: number; failed: number; n: number; p99Ms: number }>;
}

export function analyze(outcomes: Outcome[], sloMs: number[], unitS: number): RunStats {
  const windows: WindowStat[] = [];
  const perFn = sloMs.map((slo, fn) => {
    const mine = outcomes.filter((o) => o.fn === fn);
    const bins = new Map<number, Outcome[]>();
    for (const o of mine) {
      const w = Math.floor(o.t / unitS);
      bins.set(w, [...(bins.get(w) ?? []), o]);
    }
    let uSum = 0;
    for (const [w, os] of [...bins.entries()].sort((a, b) => a[0] - b[0])) {
      const lat = os.map((o) => (o.status === 200 && o.ms !== undefined ? o.ms : DROPPED_MS)).sort((a, b) => a - b);
      const p99 = quantileSorted(lat, 0.99);
      const u = Math.min(slo / p99, 1);
      uSum += u;
      windows.push({ fn, window: w, n: os.length, dropped: os.filter((o) => o.status === 429).length,
        failed: os.filter((o) => o.status !== 200 && o.status !== 429).length, p99Ms: p99,
        withinSlo: lat.filter((x) => x <= slo).length / os.length, utility: u });
    }
    const lat = mine.map((o) => (o.status === 200 && o.ms !== undefined ? o.ms : DROPPED_MS)).sort((a, b) => a - b);
    return { utility: bins.size > 0 ? uSum / bins.size : 1, withinSlo: mine.length > 0 ? lat.filter((x) => x <= slo).length / mine.length : 1,
      dropped: mine.filter((o) => o.status === 429).length, failed: mine.filter((o) => o.status !== 200 && o.status !== 429).length, n: mine.length,
      p99Ms: lat.length > 0 ? quantileSorted(lat, 0.99) : 0 };
  });
  return { windows, perFn, lostUtility: perFn.reduce((s, f) => s + (1 - f.utility), 0) };
}

/** Mean and half the range of a list (the spread reported over seeds). */
export function meanSpread(xs: number[]): { mean: number; spread: number } {
  if (xs.length === 0) return { mean: NaN, spread: NaN };
  return { mean: xs.reduce((a, b) => a + b, 0) / xs.length, spread: (Math.max(...xs) - Math.min(...xs)) / 2 };
}
