/**
 * numpy- and CPython-compatible random streams, so that "seed 42" in our Faro simulator names the
 * same draws as in the artifact's (beomyeol/faro, Python + numpy). Written from the published
 * algorithms, not from numpy's sources:
 * - MT19937 (Matsumoto & Nishimura 1998): `init_genrand` (numpy's legacy `RandomState(seed)` for an
 *   int seed) and `init_by_array` (CPython's `random.seed(int)`, the int's 32-bit words, low first);
 *   doubles from two words, (a >> 5, b >> 6) → (a·2^26 + b) / 2^53 (both libraries);
 * - numpy's legacy Gaussian: the polar (Marsaglia) method, whose second value is kept for the next call;
 *   legacy lognormal = exp(mean + σ·gauss), legacy exponential = −log(1 − u)·scale;
 * - CPython's `random.shuffle`: Fisher–Yates from the end, j = randbelow(i + 1) by rejection on
 *   `getrandbits(bit_length(i + 1))`;
 * - numpy's `default_rng(seed)`: SeedSequence (O'Neill's hash-mixing of the entropy words into a
 *   4-word pool, then 4 uint64 of state) → PCG64 (128-bit LCG, XSL-RR output) → `Generator.exponential`
 *   by the 256-level exponential ziggurat (Marsaglia & Tsang 2000) on 53-bit integers.
 * Bit-exactness is tested against vectors made with numpy 1.24 (test/fixtures/faro-rng/).
 */

// ---------------------------------------------------------------- MT19937

const N = 624;
const M = 397;

export class MT19937 {
  private readonly mt = new Uint32Array(N);
  private mti = N + 1;

  static fromSeed(seed: number): MT19937 {
    const g = new MT19937();
    g.initGenrand(seed >>> 0);
    return g;
  }

  /** CPython's `random.seed(n)` for a non-negative int n below 2^53. */
  static fromPythonSeed(seed: number): MT19937 {
    const g = new MT19937();
    const key: number[] = [];
    let s = Math.abs(Math.trunc(seed));
    do {
      key.push(s % 0x100000000);
      s = Math.floor(s / 0x100000000);
    } while (s > 0);
    g.initByArray(key);
    return g;
  }

  private initGenrand(s: number): void {
    const mt = this.mt;
    mt[0] = s >>> 0;
    for (let i = 1; i < N; i++) {
      const prev = mt[i - 1] ^ (mt[i - 1] >>> 30);
      mt[i] = (Math.imul(1812433253, prev) + i) >>> 0;
    }
    this.mti = N;
  }

  private initByArray(key: readonly number[]): void {
    const mt = this.mt;
    this.initGenrand(19650218);
    let i = 1;
    let j = 0;
    for (let k = Math.max(N, key.length); k > 0; k--) {
      const prev = mt[i - 1] ^ (mt[i - 1] >>> 30);
      mt[i] = ((mt[i] ^ Math.imul(prev, 1664525)) + key[j] + j) >>> 0;
      i++;
      j++;
      if (i >= N) {
        mt[0] = mt[N - 1];
        i = 1;
      }
      if (j >= key.length) j = 0;
    }
    for (let k = N - 1; k > 0; k--) {
      const prev = mt[i - 1] ^ (mt[i - 1] >>> 30);
      mt[i] = ((mt[i] ^ Math.imul(prev, 1566083941)) - i) >>> 0;
      i++;
      if (i >= N) {
        mt[0] = mt[N - 1];
        i = 1;
      }
    }
    mt[0] = 0x80000000;
    this.mti = N;
  }

  private twist(): void {
    const mt = this.mt;
    for (let k = 0; k < N; k++) {
      const y = (mt[k] & 0x80000000) | (mt[(k + 1) % N] & 0x7fffffff);
      mt[k] = mt[(k + M) % N] ^ (y >>> 1) ^ (y & 1 ? 0x9908b0df : 0);
    }
    this.mti = 0;
  }

  nextUint32(): number {
    if (this.mti >= N) this.twist();
    let y = this.mt[this.mti++];
    y ^= y >>> 11;
    y ^= (y << 7) & 0x9d2c5680;
    y ^= (y << 15) & 0xefc60000;
    y ^= y >>> 18;
    return y >>> 0;
  }

  /** [0, 1) with 53 random bits (numpy `random_sample`, CPython `random.random`). */
  nextDouble(): number {
    const a = this.nextUint32() >>> 5;
    const b = this.nextUint32() >>> 6;
    return (a * 67108864 + b) / 9007199254740992;
  }
}

/** numpy's legacy global stream (`np.random.seed(s)`; `np.random.lognormal`, `np.random.exponential`). */
export class LegacyRandomState {
  private readonly g: MT19937;
  private gauss = 0;
  private hasGauss = false;

  constructor(seed: number) {
    this.g = MT19937.fromSeed(seed);
  }

  randomSample(): number {
    return this.g.nextDouble();
  }

  standardNormal(): number {
    if (this.hasGauss) {
      this.hasGauss = false;
      return this.gauss;
    }
    let x1 = 0;
    let x2 = 0;
    let r2 = 0;
    do {
      x1 = 2 * this.g.nextDouble() - 1;
      x2 = 2 * this.g.nextDouble() - 1;
      r2 = x1 * x1 + x2 * x2;
    } while (r2 >= 1 || r2 === 0);
    const f = Math.sqrt((-2 * Math.log(r2)) / r2);
    this.gauss = f * x1;
    this.hasGauss = true;
    return f * x2;
  }

  lognormal(mean: number, sigma: number): number {
    return Math.exp(mean + sigma * this.standardNormal());
  }

  exponential(scale: number): number {
    return -Math.log(1 - this.g.nextDouble()) * scale;
  }
}

/** CPython's `random` module state after `random.seed(seed)`. */
export class PythonRandom {
  private readonly g: MT19937;

  constructor(seed: number) {
    this.g = MT19937.fromPythonSeed(seed);
  }

  random(): number {
    return this.g.nextDouble();
  }

  /** `getrandbits(k)` for 1 ≤ k ≤ 32. */
  private bits(k: number): number {
    return this.g.nextUint32() >>> (32 - k);
  }

  randbelow(n: number): number {
    if (n <= 0) throw new Error('randbelow: n must be > 0');
    if (n > 0x100000000) throw new Error('randbelow: n above 2^32 is not supported');
    const k = 32 - Math.clz32(n);
    let r = this.bits(k);
    while (r >= n) r = this.bits(k);
    return r;
  }

  shuffle<T>(a: T[]): T[] {
    for (let i = a.length - 1; i > 0; i--) {
      const j = this.randbelow(i + 1);
      const x = a[i];
      a[i] = a[j];
      a[j] = x;
    }
    return a;
  }
}

export { NumpyGenerator, seedSequenceState } from './numpy-pcg64';
