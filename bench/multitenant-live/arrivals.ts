/**
 * Open-loop arrivals as the Faro artifact's generator makes them (issue 24): minute m has a count
 * n_m, and its requests start at m · unit with exponential gaps of mean unit / n_m, so a minute's
 * stream may run past the minute's end and overlap the next one's (short bursts at minute starts).
 * `unit` is the bench's "minute" in seconds (a short one, to fit the machine's time). Pure and seeded.
 */

import { mulberry32 } from '../../autoscaler/sim/rng';

/** The seeded PRNG in [0, 1) (the simulators' mulberry32). */
export const rng = mulberry32;

/** Arrival times, s from the start, sorted: n_m requests from m · unitS, exponential gaps of mean unitS / n_m. */
export function arrivalTimes(counts: number[], unitS: number, rand: () => number): number[] {
  const out: number[] = [];
  counts.forEach((n, m) => {
    let t = m * unitS;
    for (let i = 0; i < n; i++) {
      t += (-Math.log(1 - rand()) * unitS) / n;
      out.push(t);
    }
  });
  return out.sort((a, b) => a - b);
}

/**
 * Per-minute counts of one function: a mean rate (req/s) swinging by ± `amp` over `periodMin`
 * minutes at phase `phase` (rad), each minute's count scaled by a random factor in [1 − noise, 1 + noise].
 * Three functions at phases 0, 2π/3, 4π/3 keep the sum near 3 × the mean while each one rises and falls.
 */
export function minuteCounts(o: { minutes: number; unitS: number; rate: number; amp: number; periodMin: number; phase: number; noise: number },
  rand: () => number): number[] {
  return Array.from({ length: o.minutes }, (_, m) => {
    const shape = 1 + o.amp * Math.sin((2 * Math.PI * m) / o.periodMin + o.phase);
    const jitter = 1 + o.noise * (2 * rand() - 1);
    return Math.max(0, Math.round(o.rate * o.unitS * shape * jitter));
  });
}

/** One request of the schedule: its function (index) and its time, s from the start. */
export interface Arrival { fn: number; t: number }

/** The merged schedule of every function's arrivals, by time. */
export function schedule(perFn: number[][]): Arrival[] {
  return perFn.flatMap((ts, fn) => ts.map((t) => ({ fn, t }))).sort((a, b) => a.t - b.t);
}
