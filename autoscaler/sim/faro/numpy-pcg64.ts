/**
 * numpy's `np.random.default_rng(seed)` for an int seed: SeedSequence → PCG64 → `Generator.exponential`
 * (see numpy-random.ts for the sources of each algorithm). 128-bit arithmetic on eight 16-bit limbs.
 */

// ---------------------------------------------------------------- SeedSequence

const INIT_A = 0x43b0d7e5;
const MULT_A = 0x931e8875;
const INIT_B = 0x8b51f9dd;
const MULT_B = 0x58f38ded;
const MIX_MULT_L = 0xca01f9dd;
const MIX_MULT_R = 0x4973f715;
const POOL = 4;

/** The uint32 words of SeedSequence(seed).generate_state(nWords32) (uint64 words = pairs, low first). */
export function seedSequenceState(seed: number, nWords32: number): Uint32Array {
  if (!Number.isInteger(seed) || seed < 0 || seed > Number.MAX_SAFE_INTEGER) throw new Error('seed must be a non-negative safe integer');
  const entropy: number[] = [];
  let s = seed;
  do {
    entropy.push(s % 0x100000000);
    s = Math.floor(s / 0x100000000);
  } while (s > 0);
  let hashConst = INIT_A;
  const hashmix = (v: number): number => {
    let x = (v ^ hashConst) >>> 0;
    hashConst = Math.imul(hashConst, MULT_A) >>> 0;
    x = Math.imul(x, hashConst) >>> 0;
    return (x ^ (x >>> 16)) >>> 0;
  };
  const mix = (x: number, y: number): number => {
    const r = (Math.imul(MIX_MULT_L, x) - Math.imul(MIX_MULT_R, y)) >>> 0;
    return (r ^ (r >>> 16)) >>> 0;
  };
  const pool = new Uint32Array(POOL);
  for (let i = 0; i < POOL; i++) pool[i] = hashmix(i < entropy.length ? entropy[i] : 0);
  for (let src = 0; src < POOL; src++) {
    for (let dst = 0; dst < POOL; dst++) if (src !== dst) pool[dst] = mix(pool[dst], hashmix(pool[src]));
  }
  for (let src = POOL; src < entropy.length; src++) {
    for (let dst = 0; dst < POOL; dst++) pool[dst] = mix(pool[dst], hashmix(entropy[src]));
  }
  const out = new Uint32Array(nWords32);
  let hc = INIT_B;
  for (let i = 0; i < nWords32; i++) {
    let v = (pool[i % POOL] ^ hc) >>> 0;
    hc = Math.imul(hc, MULT_B) >>> 0;
    v = Math.imul(v, hc) >>> 0;
    out[i] = (v ^ (v >>> 16)) >>> 0;
  }
  return out;
}

// ---------------------------------------------------------------- 128-bit limbs

type Limbs = Uint32Array; // 8 limbs of 16 bits, least significant first

function fromWords(hi64: [number, number], lo64: [number, number]): Limbs {
  // each pair: [high uint32, low uint32]
  const l = new Uint32Array(8);
  const w = [lo64[1], lo64[0], hi64[1], hi64[0]];
  for (let i = 0; i < 4; i++) {
    l[2 * i] = w[i] & 0xffff;
    l[2 * i + 1] = w[i] >>> 16;
  }
  return l;
}

function mulAdd(out: Limbs, a: Limbs, m: Limbs, c: Limbs): void {
  const t = new Float64Array(8);
  for (let i = 0; i < 8; i++) {
    const ai = a[i];
    if (ai === 0) continue;
    for (let j = 0; i + j < 8; j++) t[i + j] += ai * m[j];
  }
  let carry = 0;
  for (let k = 0; k < 8; k++) {
    const v = t[k] + c[k] + carry;
    out[k] = v % 65536;
    carry = Math.floor(v / 65536);
  }
}

function add(out: Limbs, a: Limbs, b: Limbs): void {
  let carry = 0;
  for (let k = 0; k < 8; k++) {
    const v = a[k] + b[k] + carry;
    out[k] = v & 0xffff;
    carry = v >>> 16;
  }
}

/** 0x2360ED051FC65DA44385DF649FCCF645, PCG's default 128-bit multiplier. */
const MULT = fromWords([0x2360ed05, 0x1fc65da4], [0x4385df64, 0x9fccf645]);

// ---------------------------------------------------------------- PCG64

export class PCG64 {
  private readonly state: Limbs = new Uint32Array(8);
  private readonly inc: Limbs;
  /** The last output as two uint32 (set by `next64`). */
  hi = 0;
  lo = 0;

  constructor(seed: number) {
    const w = seedSequenceState(seed, 8); // 4 uint64: v0..v3, each (low word, high word)
    const u64 = (k: number): [number, number] => [w[2 * k + 1], w[2 * k]];
    const initState = fromWords(u64(0), u64(1));
    const initSeq = fromWords(u64(2), u64(3));
    // inc = (initseq << 1) | 1
    this.inc = new Uint32Array(8);
    let carry = 0;
    for (let k = 0; k < 8; k++) {
      const v = initSeq[k] * 2 + carry;
      this.inc[k] = v & 0xffff;
      carry = v >>> 16;
    }
    this.inc[0] |= 1;
    this.step();
    add(this.state, this.state, initState);
    this.step();
  }

  private step(): void {
    mulAdd(this.state, this.state, MULT, this.inc);
  }

  /** Advances and leaves the 64-bit output in (hi, lo). */
  next64(): void {
    this.step();
    const s = this.state;
    const hiHi = ((s[7] << 16) | s[6]) >>> 0;
    const hiLo = ((s[5] << 16) | s[4]) >>> 0;
    const loHi = ((s[3] << 16) | s[2]) >>> 0;
    const loLo = ((s[1] << 16) | s[0]) >>> 0;
    const xh = (hiHi ^ loHi) >>> 0;
    const xl = (hiLo ^ loLo) >>> 0;
    const rot = s[7] >>> 10;
    if (rot === 0) {
      this.hi = xh;
      this.lo = xl;
    } else if (rot < 32) {
      this.hi = ((xh >>> rot) | (xl << (32 - rot))) >>> 0;
      this.lo = ((xl >>> rot) | (xh << (32 - rot))) >>> 0;
    } else if (rot === 32) {
      this.hi = xl;
      this.lo = xh;
    } else {
      const r = rot - 32;
      this.hi = ((xl >>> r) | (xh << (32 - r))) >>> 0;
      this.lo = ((xh >>> r) | (xl << (32 - r))) >>> 0;
    }
  }

  /** next64 >> 11, a 53-bit integer (exact in a double). */
  next53(): number {
    this.next64();
    return this.hi * 2097152 + (this.lo >>> 11);
  }
}

// ---------------------------------------------------------------- exponential ziggurat

const ZIG_R = 7.69711747013104972;
const ZIG_V = 0.0039496598225815571993;
const TWO53 = 9007199254740992;

/** Tables ke (integers), we, fe for 256 levels, built as Marsaglia & Tsang describe. */
function expTables(): { ke: Float64Array; we: Float64Array; fe: Float64Array } {
  const ke = new Float64Array(256);
  const we = new Float64Array(256);
  const fe = new Float64Array(256);
  let de = ZIG_R;
  let te = de;
  const q = ZIG_V / Math.exp(-de);
  ke[0] = Math.floor((de / q) * TWO53);
  ke[1] = 0;
  we[0] = q / TWO53;
  we[255] = de / TWO53;
  fe[0] = 1;
  fe[255] = Math.exp(-de);
  for (let i = 254; i >= 1; i--) {
    de = -Math.log(ZIG_V / de + Math.exp(-de));
    ke[i + 1] = Math.floor((de / te) * TWO53);
    te = de;
    fe[i] = Math.exp(-de);
    we[i] = de / TWO53;
  }
  return { ke, we, fe };
}

const T = expTables();

/** numpy's `Generator` for `default_rng(seed)`: the draws the artifact's load generator uses. */
export class NumpyGenerator {
  private readonly bg: PCG64;

  constructor(seed: number) {
    this.bg = new PCG64(seed);
  }

  /** [0, 1) with 53 bits (`Generator.random`). */
  random(): number {
    return this.bg.next53() / TWO53;
  }

  standardExponential(): number {
    for (let tries = 0; tries < 1_000_000; tries++) {
      this.bg.next64();
      const idx = (this.bg.lo >>> 3) & 0xff;
      const ri = this.bg.hi * 2097152 + (this.bg.lo >>> 11);
      const x = ri * T.we[idx];
      if (ri < T.ke[idx]) return x;
      if (idx === 0) return ZIG_R - Math.log1p(-this.random());
      if ((T.fe[idx - 1] - T.fe[idx]) * this.random() + T.fe[idx] < Math.exp(-x)) return x;
    }
    throw new Error('exponential ziggurat did not accept in 10^6 tries');
  }

  exponential(scale: number): number {
    return scale * this.standardExponential();
  }
}
