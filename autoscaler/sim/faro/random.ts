import { mulberry32 } from '../rng';
import { LegacyRandomState, NumpyGenerator, PythonRandom } from './numpy-random';

/**
 * Random streams of the Faro simulator. The artifact seeds three generators with the run's seed
 * (`pl.seed_everything(seed)` and the load generator's `default_rng(seed)`), and so do we, with ports
 * of the same generators (numpy-random.ts), so that our "seed 42" is the artifact's seed 42:
 * - arrivals: numpy `default_rng(seed).exponential(60 / n, n)` per minute and job (trace.ts);
 * - service and proxy times: the global `np.random` (legacy MT19937), one stream for both, as the
 *   artifact's `LogNormDistribution.draw`;
 * - the drop test (one `random.random()` per request, whatever the drop rate) and the replica order
 *   (`random.shuffle` on every change of a job's replicas): CPython's `random`, one stream.
 * The arrivals are the same draws in the same order. The other two streams are the same generators,
 * but their draws are taken in our simulator's event order, which is not SimPy's in every tie, so
 * after the first difference they are assigned to different requests.
 */
export interface NormalSource {
  normal(): number;
}

export interface UniformSource {
  uniform(): number;
  shuffle<T>(a: T[]): T[];
}

export interface FaroStreams {
  readonly arrivals: NumpyGenerator;
  /** Proxy and service times: two views of one generator (kept apart so that tests can tell the draws apart). */
  readonly route: NormalSource;
  readonly service: NormalSource;
  readonly python: UniformSource;
}

export function faroStreams(seed: number): FaroStreams {
  const legacy = new LegacyRandomState(seed);
  const py = new PythonRandom(seed);
  return {
    arrivals: new NumpyGenerator(seed),
    route: { normal: () => legacy.standardNormal() },
    service: { normal: () => legacy.standardNormal() },
    python: { uniform: () => py.random(), shuffle: <T>(a: T[]) => py.shuffle(a) },
  };
}

/** A seeded stream with our own generator (mulberry32): for tests and callers that need no numpy parity. */
export class Stream implements NormalSource, UniformSource {
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

/** scipy-style shifted log-normal: exp(shape · N(0, 1)) · scale + loc (the artifact's `lognorm`, in its order of operations). */
export interface LogNormSpec {
  readonly shape: number;
  readonly loc: number;
  readonly scale: number;
}

export function drawLogNorm(s: NormalSource, d: LogNormSpec): number {
  return Math.exp(d.shape * s.normal()) * d.scale + d.loc;
}

/** Derives independent stream seeds from one run seed. */
export function subSeed(seed: number, k: number): number {
  let h = (seed ^ Math.imul(k + 1, 0x9e3779b1)) >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b) >>> 0;
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35) >>> 0;
  return (h ^ (h >>> 16)) >>> 0;
}
