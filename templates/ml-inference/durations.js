// @ts-check
'use strict';
/**
 * Go's `time.ParseDuration`, for the OpenFaaS timeout variables (`read_timeout`, `write_timeout`,
 * `exec_timeout`). Grammar: an optional sign, then one or more `<decimal><unit>` terms (`1h2m`,
 * `1.5s`, `.5s`, `1.s`), units ns, us, µs (U+00B5), μs (U+03BC), ms, s, m, h; the lone `0` needs
 * no unit. The limits are Go's: past 2^63 − 1 ns is an error, and a fraction is added the way Go
 * adds it (float64, truncated). The gateway validates the same grammar at deploy
 * (gateway/lib/go-duration.ts); templates import nothing from the gateway, hence this copy of
 * the grammar (written separately, same tests of Go's table).
 */

/** @type {Record<string, bigint>} nanoseconds per unit */
const UNITS = {
  ns: 1n, us: 1000n, 'µs': 1000n, 'μs': 1000n, ms: 1000000n, s: 1000000000n, m: 60000000000n, h: 3600000000000n,
};
const LIMIT = 1n << 63n;

/** Thrown for a string that is not a Go duration; the message quotes it and says why. */
class DurationError extends Error {}

/** @param {string | undefined} c */
const digit = (c) => c !== undefined && c >= '0' && c <= '9';

/**
 * @param {string} text
 * @returns {bigint} nanoseconds (negative when the text says so)
 */
function parseDurationNs(text) {
  const fail = (/** @type {string} */ why) => new DurationError(`invalid duration ${JSON.stringify(text)}: ${why}`);
  let i = 0;
  let negative = false;
  if (text[0] === '+' || text[0] === '-') {
    negative = text[0] === '-';
    i = 1;
  }
  if (text.slice(i) === '0') return 0n;
  if (i >= text.length) throw fail('empty');
  let total = 0n;
  while (i < text.length) {
    if (text[i] !== '.' && !digit(text[i])) throw fail(`expected a number at ${JSON.stringify(text.slice(i))}`);
    let whole = 0n;
    const wholeAt = i;
    for (; digit(text[i]); i++) {
      if (whole > LIMIT / 10n) throw fail('overflow');
      whole = whole * 10n + BigInt(text.charCodeAt(i) - 48);
      if (whole > LIMIT) throw fail('overflow');
    }
    const wholeDigits = i > wholeAt;
    let frac = 0n;
    let scale = 1;
    let fracDigits = false;
    if (text[i] === '.') {
      i += 1;
      const fracAt = i;
      let full = false;
      for (; digit(text[i]); i++) {
        if (full) continue;
        const next = frac * 10n + BigInt(text.charCodeAt(i) - 48);
        if (frac > (LIMIT - 1n) / 10n || next > LIMIT) {
          full = true; // Go ignores the digits it can no longer hold
          continue;
        }
        frac = next;
        scale *= 10;
      }
      fracDigits = i > fracAt;
    }
    if (!wholeDigits && !fracDigits) throw fail('expected a number');
    const unitAt = i;
    while (i < text.length && text[i] !== '.' && !digit(text[i])) i++;
    const unit = text.slice(unitAt, i);
    if (unit === '') throw fail('missing unit (ns, us, µs, ms, s, m, h)');
    const per = UNITS[unit];
    if (per === undefined) throw fail(`unknown unit ${JSON.stringify(unit)} (ns, us, µs, ms, s, m, h)`);
    if (whole > LIMIT / per) throw fail('overflow');
    let v = whole * per;
    if (frac > 0n) {
      v += BigInt(Math.trunc(Number(frac) * (Number(per) / scale)));
      if (v > LIMIT) throw fail('overflow');
    }
    total += v;
    if (total > LIMIT) throw fail('overflow');
  }
  if (negative) return -total;
  if (total > LIMIT - 1n) throw fail('overflow');
  return total;
}

/** @param {string} text @returns {number} milliseconds (fractional: `1500us` is 1.5) */
function parseDurationMs(text) {
  return Number(parseDurationNs(text)) / 1e6;
}

module.exports = { parseDurationNs, parseDurationMs, DurationError };
