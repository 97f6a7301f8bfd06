import { mulberry32 } from '../../autoscaler/sim/rng';

/**
 * Per-second rates of a trace segment scaled to this machine: `seconds` rates starting at `start`
 * of a per-second series, stretched (each trace second held `stretch` seconds, so a long segment
 * fits a short run by compressing time instead of cutting it) and rescaled so that the segment's
 * peak is `peakRps`. Pure.
 */
export function segmentRates(counts: readonly number[], start: number, seconds: number, peakRps: number, stretch = 1): number[] {
  const out: number[] = [];
  for (let s = 0; s < seconds; s++) out.push(counts[Math.min(counts.length - 1, start + Math.floor(s / stretch))] ?? 0);
  const peak = Math.max(...out, 0);
  return peak > 0 ? out.map((x) => (x / peak) * peakRps) : out;
}

/**
 * Open-loop arrival times (ms from the start) for piecewise-constant rates (one per second):
 * a Poisson process (exponential gaps) from a seeded PRNG, fixed before the run, so every policy
 * sees the very same requests. Pure.
 */
export function poissonSchedule(rates: readonly number[], seed: number): number[] {
  const rand = mulberry32(seed);
  const out: number[] = [];
  let t = 0; // seconds
  for (;;) {
    const sec = Math.floor(t);
    if (sec >= rates.length) break;
    const r = rates[sec];
    if (!(r > 0)) {
      t = sec + 1;
      continue;
    }
    const gap = -Math.log(1 - rand()) / r;
    // memorylessness: a gap crossing into the next second restarts there at that second's rate
    if (t + gap >= sec + 1) {
      t = sec + 1;
      continue;
    }
    t += gap;
    out.push(t * 1000);
  }
  return out;
}

/** Arrivals per second of a schedule (ms), `seconds` bins (the simulator's input). Pure. */
export function countsPerSecond(arrivalsMs: readonly number[], seconds: number): number[] {
  const c = new Array<number>(seconds).fill(0);
  for (const a of arrivalsMs) {
    const s = Math.floor(a / 1000);
    if (s >= 0 && s < seconds) c[s]++;
  }
  return c;
}
