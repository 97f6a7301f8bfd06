import { mulberry32 } from '../rng';

/**
 * Seeded random streams for the Faro simulator. The artifact draws from numpy (arrivals from
 * `default_rng(seed)`, service and routing times from the global `np.random`, replica order from
 * Python's `random`); we do not reproduce numpy's bit streams, only the distributions, each from its
 * own stream so that changing one part of a run does not shift the others.
 */
export class Stream {
  private readonly u: () => number;
  private spare = NaN;

  constructor(seed: number) {
    this.u = mulberry32(seed);
  }

  uniform(): number {
    return this.u();
  }

  /** Exponential with the given mean. */
  exponential(mean: number): number {
    return -Math.log(1 - this.u()) * mean;
  }

  /** Standard normal (Box–Muller, the second value kept for the next call). */
  normal(): number {
    if (!Number.isNaN(this.spare)) {
      const s = this.spare;
      this.spare = NaN;
      return s;
    }
    const r = Math.sqrt(-2 * Math.log(Math.max(this.u(), 1e-300)));
    const th = 2 * Math.PI * this.u();
    this.spare = r * Math.sin(th);
    return r * Math.cos(th);
  }

  /** Fisher–Yates shuffle in place. */
  shuffle<T>(a: T[]): T[] {
    for (let i = a.length - 1; i > 0; i--) {
      const j = Math.floor(this.u() * (i + 1));
      const x = a[i];
      a[i] = a[j];
      a[j] = x;
    }
    return a;
  }
}

/** scipy-style shifted log-normal: loc + scale · exp(shape · N(0, 1)) (the artifact's `lognorm`). */
export interface LogNormSpec {
  readonly shape: number;
  readonly loc: number;
  readonly scale: number;
}

export function drawLogNorm(s: Stream, d: LogNormSpec): number {
  return d.loc + d.scale * Math.exp(d.shape * s.normal());
}

/** Derives independent stream seeds from one run seed. */
export function subSeed(seed: number, k: number): number {
  let h = (seed ^ Math.imul(k + 1, 0x9e3779b1)) >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b) >>> 0;
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35) >>> 0;
  return (h ^ (h >>> 16)) >>> 0;
}
