/**
 * Go's `time.ParseDuration` grammar, exactly: an optional sign, then one or more
 * `<decimal number><unit>` terms (`300ms`, `-1.5h`, `2h45m`, `.5s`, `1.s`), units `ns`, `us`,
 * `µs` (U+00B5), `μs` (U+03BC), `ms`, `s`, `m`, `h`; the lone `0` needs no unit; anything else
 * (empty string, a number without its unit, `1d`, spaces, a sign inside) is an error, and so is a
 * total beyond ±(2^63 − 1) ns (Go's "invalid duration" overflow). Pure; results in nanoseconds.
 */

const UNIT_NS: Record<string, bigint> = {
  ns: 1n,
  us: 1_000n,
  'µs': 1_000n,
  'μs': 1_000n,
  ms: 1_000_000n,
  s: 1_000_000_000n,
  m: 60_000_000_000n,
  h: 3_600_000_000_000n,
};

const TWO63 = 1n << 63n;

/** A Go duration that could not be parsed; `message` quotes it the way Go's error does. */
export class GoDurationError extends Error {}

const isDigit = (c: string | undefined) => c !== undefined && c >= '0' && c <= '9';

/**
 * Parses `s` as Go's `time.ParseDuration` does, step for step (its integer overflow limits and
 * its float64 arithmetic for fractions included); returns nanoseconds (a bigint: Go's range is
 * int64). Throws `GoDurationError` with the reason.
 */
export function parseGoDurationNs(s: string): bigint {
  const bad = (why: string) => new GoDurationError(`invalid duration ${JSON.stringify(s)}: ${why}`);
  let i = 0;
  let neg = false;
  if (s[0] === '-' || s[0] === '+') {
    neg = s[0] === '-';
    i = 1;
  }
  if (s.slice(i) === '0') return 0n;
  if (i === s.length) throw bad('empty');
  let d = 0n;
  while (i < s.length) {
    if (!(s[i] === '.' || isDigit(s[i]))) throw bad('expected a number');
    // the integer part (Go's leadingInt: an error past 2^63)
    let v = 0n;
    const intStart = i;
    for (; isDigit(s[i]); i++) {
      if (v > TWO63 / 10n) throw bad('overflow');
      v = v * 10n + BigInt(s.charCodeAt(i) - 48);
      if (v > TWO63) throw bad('overflow');
    }
    const pre = i > intStart;
    // the fraction (Go's leadingFraction: digits past overflow are ignored, scale is a float64)
    let f = 0n;
    let scale = 1;
    let post = false;
    if (s[i] === '.') {
      i++;
      const fracStart = i;
      let overflow = false;
      for (; isDigit(s[i]); i++) {
        if (overflow) continue;
        if (f > (TWO63 - 1n) / 10n) {
          overflow = true;
          continue;
        }
        const y = f * 10n + BigInt(s.charCodeAt(i) - 48);
        if (y > TWO63) {
          overflow = true;
          continue;
        }
        f = y;
        scale *= 10;
      }
      post = i > fracStart;
    }
    if (!pre && !post) throw bad('expected a number');
    const unitStart = i;
    while (i < s.length && s[i] !== '.' && !isDigit(s[i])) i++;
    const unit = s.slice(unitStart, i);
    if (unit === '') throw bad('missing unit');
    const mult = UNIT_NS[unit];
    if (mult === undefined) throw bad(`unknown unit ${JSON.stringify(unit)}`);
    if (v > TWO63 / mult) throw bad('overflow');
    v *= mult;
    if (f > 0n) {
      v += BigInt(Math.trunc(Number(f) * (Number(mult) / scale)));
      if (v > TWO63) throw bad('overflow');
    }
    d += v;
    if (d > TWO63) throw bad('overflow');
  }
  if (neg) return -d;
  if (d > TWO63 - 1n) throw bad('overflow');
  return d;
}

/** `parseGoDurationNs` in milliseconds (a float: `1500us` is 1.5). */
export function parseGoDurationMs(s: string): number {
  return Number(parseGoDurationNs(s)) / 1e6;
}
