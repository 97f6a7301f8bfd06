/**
 * Pure arithmetic on kernel-completion traces (CLOCK_MONOTONIC ns, one per
 * completed launch), shared by test/native and bench/native-bench.ts.
 */

/** Fraction of device time used in [lo, hi): completions × kernel duration / span. */
export function busyFraction(trace: number[], lo: number, hi: number, kernelNs: number): number {
  if (hi <= lo) return 0;
  let n = 0;
  for (const t of trace) if (t >= lo && t < hi) n++;
  return (n * kernelNs) / (hi - lo);
}

export interface ShareResult {
  /** measured fraction of the device each trace used over the common interval */
  used: number[];
  /** each trace's share of what all of them used (sums to 1) */
  share: number[];
  /** the common interval, ns */
  lo: number;
  hi: number;
}

/** Shares over the interval all traces cover, after `warmupNs` from the latest start. */
export function steadyShares(traces: number[][], kernelNs: number, warmupNs: number): ShareResult {
  const lo = Math.max(...traces.map((t) => t[0])) + warmupNs;
  const hi = Math.min(...traces.map((t) => t[t.length - 1]));
  const used = traces.map((t) => busyFraction(t, lo, hi, kernelNs));
  const total = used.reduce((a, b) => a + b, 0);
  return { used, share: used.map((u) => (total ? u / total : 0)), lo, hi };
}

/**
 * Time from `t0` until the rate settles: the first T >= t0 such that every
 * window [T', T' + spanNs) with T' in [T, end - spanNs] (stepped by 1 ms) has a
 * busy fraction for which `ok` holds. Returns ns, or Infinity if it never does.
 */
export function reactionNs(
  trace: number[],
  t0: number,
  kernelNs: number,
  spanNs: number,
  ok: (fraction: number) => boolean,
  endNs = trace[trace.length - 1],
): number {
  const step = 1e6;
  let settled = Infinity;
  for (let T = endNs - spanNs; T >= t0; T -= step) {
    if (!ok(busyFraction(trace, T, T + spanNs, kernelNs))) break;
    settled = T;
  }
  return settled === Infinity ? Infinity : settled - t0;
}

/** Time from `t0` to the first window [T, T + spanNs) (stepped by 1 ms) whose busy fraction satisfies `ok`. */
export function firstReachNs(trace: number[], t0: number, kernelNs: number, spanNs: number,
  ok: (fraction: number) => boolean, endNs = trace[trace.length - 1]): number {
  for (let T = t0; T + spanNs <= endNs; T += 1e6) if (ok(busyFraction(trace, T, T + spanNs, kernelNs))) return T - t0;
  return Infinity;
}
