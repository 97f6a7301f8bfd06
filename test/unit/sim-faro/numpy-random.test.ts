import { readFileSync } from 'fs';
import { join } from 'path';
import { LegacyRandomState, MT19937, NumpyGenerator, PythonRandom, seedSequenceState } from '../../../autoscaler/sim/faro/numpy-random';
import { PCG64 } from '../../../autoscaler/sim/faro/numpy-pcg64';

/** Vectors made with numpy 1.24 and CPython by test/fixtures/faro-rng/make-vectors.py (see its header). */
interface Vectors {
  seedseq42_u32x8: number[];
  seedseq123456789012_u32x8: number[];
  pcg64_42_raw: string[];
  gen42_random: number[];
  gen42_exponential_blocks: { counts: number[]; values: number[][] };
  gen7_standard_exponential_4000: number[];
  legacy42_random_sample: number[];
  legacy42_mixed: Array<[string, number]>;
  py42_random: number[];
  py42_shuffles_after_5: number[][];
  py_bigseed_random: number[];
}

/**
 * Integers and uniforms are bit-exact. Values through exp/log are not always: V8's Math.exp/log are not
 * glibc's (1 ulp apart at times), and our ziggurat tables are computed in doubles (numpy's were computed
 * at higher precision), so exponentials can differ in the last bits (up to ~1e-13 relative), never by a
 * different draw: a desynchronised stream would differ in the leading digits.
 */
function expectSameDraws(got: number[], want: number[], rel: number): void {
  expect(got.length).toBe(want.length);
  let worst = 0;
  for (let i = 0; i < want.length; i++) worst = Math.max(worst, Math.abs(got[i] - want[i]) / Math.abs(want[i]));
  expect(worst).toBeLessThan(rel);
}

const V = JSON.parse(readFileSync(join(__dirname, '../../fixtures/faro-rng/vectors.json'), 'utf8')) as Vectors;

describe('numpy SeedSequence and PCG64', () => {
  it('SeedSequence.generate_state matches numpy word for word', () => {
    expect(Array.from(seedSequenceState(42, 8))).toEqual(V.seedseq42_u32x8);
    expect(Array.from(seedSequenceState(123456789012, 8))).toEqual(V.seedseq123456789012_u32x8);
  });

  it('PCG64(42).random_raw matches numpy', () => {
    const g = new PCG64(42);
    const got = V.pcg64_42_raw.map(() => {
      g.next64();
      return ((BigInt(g.hi) << 32n) | BigInt(g.lo)).toString();
    });
    expect(got).toEqual(V.pcg64_42_raw);
  });

  it('default_rng(42).random matches numpy', () => {
    const g = new NumpyGenerator(42);
    expect(V.gen42_random.map(() => g.random())).toEqual(V.gen42_random);
  });

  it('exponential blocks as the artifact draws them are the same draws', () => {
    const g = new NumpyGenerator(42);
    const { counts, values } = V.gen42_exponential_blocks;
    counts.forEach((n, b) => {
      const got = Array.from({ length: n }, () => g.exponential(60 / n));
      expectSameDraws(got, values[b], 1e-13);
    });
  });

  it('4000 standard exponentials of seed 7 are the same draws (the ziggurat tails included)', () => {
    const g = new NumpyGenerator(7);
    const got = V.gen7_standard_exponential_4000.map(() => g.standardExponential());
    expectSameDraws(got, V.gen7_standard_exponential_4000, 1e-13);
  });
});

describe('numpy legacy RandomState (MT19937)', () => {
  it('random_sample after np.random.seed(42)', () => {
    const g = new LegacyRandomState(42);
    expect(V.legacy42_random_sample.map(() => g.randomSample())).toEqual(V.legacy42_random_sample);
  });

  it('lognormal and exponential interleaved keep the cached Gaussian as numpy does', () => {
    const g = new LegacyRandomState(42);
    const got = V.legacy42_mixed.map(([kind]) => (kind === 'exp' ? g.exponential(0.5) : g.lognormal(0, 0.42247119243841247)));
    expectSameDraws(got, V.legacy42_mixed.map((m) => m[1]), 1e-15);
  });
});

describe('CPython random', () => {
  it('random() after random.seed(42)', () => {
    const r = new PythonRandom(42);
    expect(V.py42_random.map(() => r.random())).toEqual(V.py42_random);
  });

  it('shuffle continues the same stream as CPython', () => {
    const r = new PythonRandom(42);
    for (let i = 0; i < 5; i++) r.random();
    for (const want of V.py42_shuffles_after_5) {
      const a = Array.from({ length: want.length }, (_, i) => i);
      expect(r.shuffle(a)).toEqual(want);
    }
  });

  it('a seed above 2^32 is split into 32-bit words, low first', () => {
    const r = new PythonRandom(2 ** 40 + 5);
    expect(V.py_bigseed_random.map(() => r.random())).toEqual(V.py_bigseed_random);
  });

  it('MT19937.fromSeed(5489) gives the reference first output', () => {
    expect(MT19937.fromSeed(5489).nextUint32()).toBe(3499211612);
  });
});
