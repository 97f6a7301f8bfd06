/**
 * FaPES goodput (§4.2): goodput = throughput × statistical efficiency, with Pollux's efficiency
 * E(φ, M) = (φ + M0)/(φ + M) from the gradient noise scale φ (M0 = 1). Batch size is co-adapted
 * with the worker count to maximise goodput, and the learning rate is scaled linearly with it.
 */
import { throughputAt } from '../curve';
import type { ScalingCurve } from '../types';

/** Statistical efficiency of global batch `m` under gradient noise scale `phi` (relative to M0). */
export function statisticalEfficiency(phi: number, m: number, m0 = 1): number {
  return (phi + m0) / (phi + m);
}

/** Goodput in samples/s at `gpus` workers and batch `m`: iterations/s × m × E(φ, m). */
export function goodput(curve: ScalingCurve, gpus: number, m: number, phi: number): number {
  return throughputAt(curve, gpus) * m * statisticalEfficiency(phi, m);
}

/** Linear learning-rate scaling when the batch goes from m0 to m. */
export function scaledLearningRate(lr0: number, m0: number, m: number): number {
  return (lr0 * m) / m0;
}

export interface CoAdapted {
  /**
   * Effective curve in the job's own units (iterations at its submitted batch b0 and efficiency):
   * rate(g) = max over b of T_b(g) · (b/b0) · (φ + b0)/(φ + b).
   */
  readonly curve: ScalingCurve;
  /** Batch chosen at each entry of `curve.gpus`. */
  readonly batchAt: readonly number[];
}

/** Co-adapts the batch size per worker count from curves measured at several batch sizes. */
export function coAdapt(curves: Readonly<Record<number, ScalingCurve>>, b0: number, phi: number): CoAdapted {
  const gpuSet = new Set<number>();
  for (const c of Object.values(curves)) c.gpus.forEach((g) => gpuSet.add(g));
  const gpus = [...gpuSet].sort((a, b) => a - b);
  const rate: number[] = [];
  const batchAt: number[] = [];
  const used: number[] = [];
  for (const g of gpus) {
    let best = 0;
    let bestB = b0;
    for (const [bs, c] of Object.entries(curves)) {
      const b = Number(bs);
      const r = (throughputAt(c, g) * (b / b0) * (phi + b0)) / (phi + b);
      if (r > best) {
        best = r;
        bestB = b;
      }
    }
    if (best > 0) {
      used.push(g);
      rate.push(best);
      batchAt.push(bestB);
    }
  }
  return { curve: { gpus: used, iterPerSec: rate }, batchAt };
}
