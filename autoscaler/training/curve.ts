/**
 * Scaling-curve helpers: throughput lookup at power-of-two worker counts (no interpolation, as
 * in the ElasticFlow simulator), the levels a job may use, and the next/previous level.
 */
import type { ScalingCurve, TrainingJob } from './types';

/** Worker counts the job may use: curve columns ≤ maxGpus and ≤ cap (cluster size), ascending. */
export function levelsOf(job: Pick<TrainingJob, 'curve' | 'maxGpus'>, cap = Infinity): number[] {
  const out: number[] = [];
  for (let i = 0; i < job.curve.gpus.length; i++) {
    const g = job.curve.gpus[i];
    if (g <= job.maxGpus && g <= cap && job.curve.iterPerSec[i] > 0) out.push(g);
  }
  return out;
}

/** Iterations per second at exactly `gpus` workers; 0 for 0 workers or a count not on the curve. */
export function throughputAt(curve: ScalingCurve, gpus: number): number {
  if (gpus <= 0) return 0;
  const i = curve.gpus.indexOf(gpus);
  return i < 0 ? 0 : curve.iterPerSec[i];
}

/** Largest level ≤ limit, or 0 if none. `levels` ascending. */
export function fitLevel(levels: readonly number[], limit: number): number {
  let best = 0;
  for (const l of levels) {
    if (l > limit) break;
    best = l;
  }
  return best;
}

/** Smallest level > gpus, or `gpus` itself when it is already the top. */
export function nextLevel(levels: readonly number[], gpus: number): number {
  for (const l of levels) if (l > gpus) return l;
  return gpus;
}

/** Largest level < gpus, or 0. */
export function prevLevel(levels: readonly number[], gpus: number): number {
  let best = 0;
  for (const l of levels) {
    if (l >= gpus) break;
    best = l;
  }
  return best;
}

/** Remaining iterations of a job (never negative). */
export function remainingIterations(job: Pick<TrainingJob, 'iterations' | 'doneIterations'>): number {
  return Math.max(0, job.iterations - job.doneIterations);
}

/** Seconds to finish the remaining work at a fixed worker count (Infinity if it cannot run there). */
export function secondsToFinish(job: TrainingJob, gpus: number): number {
  const t = throughputAt(job.curve, gpus);
  return t > 0 ? remainingIterations(job) / t : Infinity;
}

/** Builds a curve from a table row: `{1: x, 2: y, ...}` with missing or non-positive cells dropped. */
export function curveFromRow(row: Readonly<Record<number, number>>): ScalingCurve {
  const gpus = Object.keys(row)
    .map(Number)
    .filter((g) => Number.isFinite(row[g]) && row[g] > 0)
    .sort((a, b) => a - b);
  return { gpus, iterPerSec: gpus.map((g) => row[g]) };
}
