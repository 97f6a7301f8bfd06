/**
 * Profiling-curve representation: the first job of a model runs a short profile at 1 and 2
 * workers; the curve for 4, 8, ... workers is extrapolated with a communication-overhead model
 * t(n) = t_compute / n + t_comm · (1 − 1/n) fitted to the two points (ring all-reduce cost grows
 * as 2(n−1)/n). Curves are cached per model (and batch) in a plain map the caller owns.
 */
import type { ProfileSample } from '../../gateway/ports/training-scheduler';
import type { ScalingCurve } from './types';

export type { ProfileSample };

export function curveFromProfile(samples: readonly ProfileSample[], maxGpus: number): ScalingCurve {
  const one = samples.find((s) => s.gpus === 1)?.iterPerSec;
  const two = samples.find((s) => s.gpus === 2)?.iterPerSec;
  if (!(one! > 0)) throw new Error('profile needs a positive 1-worker throughput');
  const tCompute = 1 / one!;
  // t(2) = tCompute/2 + tComm/2  =>  tComm = 2 t(2) − tCompute (≥ 0)
  const tComm = two! > 0 ? Math.max(0, 2 / two! - tCompute) : 0;
  const gpus: number[] = [];
  const iterPerSec: number[] = [];
  for (let n = 1; n <= maxGpus; n *= 2) {
    gpus.push(n);
    iterPerSec.push(1 / (tCompute / n + tComm * (1 - 1 / n)));
  }
  return { gpus, iterPerSec };
}

/** Cache key for a model's curve. */
export const profileKey = (model: string, batchSize: number) => `${model}@${batchSize}`;

/** Returns the cached curve or undefined (then the caller schedules a profile run). */
export function cachedCurve(cache: ReadonlyMap<string, ScalingCurve>, model: string, batchSize: number): ScalingCurve | undefined {
  return cache.get(profileKey(model, batchSize));
}
