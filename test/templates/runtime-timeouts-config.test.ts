/**
 * The runtime's timeout variables (issue 25, part 5): Go's time.ParseDuration grammar, table-driven
 * with the cases of Go's own parseDurationTests (src/time/time_test.go), and the config refusing a bad value.
 */
// eslint-disable-next-line @typescript-eslint/no-var-requires
const { parseDurationNs, parseDurationMs, DurationError } = require('../../templates/ml-inference/durations');
// eslint-disable-next-line @typescript-eslint/no-var-requires
const { parseConfig, ConfigError } = require('../../templates/ml-inference/config');
import { parseGoDurationNs } from '../../gateway/lib/go-duration';

const S = 1_000_000_000n;
const MS = 1_000_000n;
const US = 1_000n;
const MIN = 60n * S;
const H = 60n * MIN;
const MAX = (1n << 63n) - 1n;

describe('parseDurationNs (Go time.ParseDuration)', () => {
  test.each([
    ['0', 0n], ['5s', 5n * S], ['30s', 30n * S], ['1478s', 1478n * S], ['-5s', -5n * S], ['+5s', 5n * S], ['-0', 0n], ['+0', 0n],
    ['5.0s', 5n * S], ['5.6s', 5n * S + 600n * MS], ['5.s', 5n * S], ['.5s', 500n * MS], ['1.0s', S], ['1.00s', S],
    ['1.004s', S + 4n * MS], ['1.0040s', S + 4n * MS], ['100.00100s', 100n * S + MS],
    ['10ns', 10n], ['11us', 11n * US], ['12µs', 12n * US], ['12μs', 12n * US], ['13ms', 13n * MS], ['14s', 14n * S], ['15m', 15n * MIN], ['16h', 16n * H],
    ['3h30m', 3n * H + 30n * MIN], ['10.5s4m', 4n * MIN + 10n * S + 500n * MS], ['-2m3.4s', -(2n * MIN + 3n * S + 400n * MS)],
    ['1h2m3s4ms5us6ns', H + 2n * MIN + 3n * S + 4n * MS + 5n * US + 6n], ['39h9m14.425s', 39n * H + 9n * MIN + 14n * S + 425n * MS],
    ['52763797000ns', 52763797000n], ['0.3333333333333333333h', 20n * MIN], ['9007199254740993ns', (1n << 53n) + 1n],
    ['9223372036854775807ns', MAX], ['9223372036854775.807us', MAX], ['9223372036s854ms775us807ns', MAX],
    ['-9223372036854775808ns', -(1n << 63n)], ['-9223372036854775.808us', -(1n << 63n)],
    ['-9223372036s854ms775us808ns', -(1n << 63n)], ['-2562047h47m16.854775808s', -(1n << 63n)],
    ['0.100000000000000000000h', 6n * MIN], ['0.830103483285477580700h', 49n * MIN + 48n * S + 372539827n],
    ['1m30s', 90n * S], ['500ms', 500n * MS],
  ])('%s', (text, want) => {
    expect(parseDurationNs(text)).toBe(want);
  });

  test.each([
    '', '3', '-', 's', '.', '-.', '.s', '+.s', '1d', '\x85\x85', '\xffff', 'hello \xffff world', '30', '1s2', ' 1s', '1 s', '1S', '1sec',
    '9223372036854775808ns', '9223372036854775810ns', '-9223372036854775809ns', '9223372036854775808s', '106751d', '2562048h',
  ])('%j is refused with a DurationError quoting it', (text) => {
    expect(() => parseDurationNs(text)).toThrow(DurationError);
    expect(() => parseDurationNs(text)).toThrow(JSON.stringify(text));
  });

  test('milliseconds keep fractions', () => {
    expect(parseDurationMs('1500us')).toBe(1.5);
    expect(parseDurationMs('1m30s')).toBe(90_000);
  });
});

describe('parseConfig timeouts', () => {
  test('unset: no exec or write limit, Node defaults for reading', () => {
    const c = parseConfig({}, '/tmp');
    expect(c).toMatchObject({ readTimeoutMs: null, writeTimeoutMs: 0, execTimeoutMs: 0, modelVersion: '1', functionName: '' });
  });

  test('Go durations in ms; "0" is none', () => {
    const c = parseConfig({ read_timeout: '500ms', write_timeout: '0', exec_timeout: '1m30s' }, '/tmp');
    expect(c).toMatchObject({ readTimeoutMs: 500, writeTimeoutMs: 0, execTimeoutMs: 90_000 });
  });

  test.each([
    ['exec_timeout', '30', 'missing unit'], ['read_timeout', '1d', 'unknown unit "d"'], ['write_timeout', '-1s', 'cannot be negative'],
    ['exec_timeout', 'ten seconds', 'invalid duration'],
  ])('%s=%j refuses to start naming the variable (%s)', (name, value, why) => {
    expect(() => parseConfig({ [name]: value }, '/tmp')).toThrow(ConfigError);
    expect(() => parseConfig({ [name]: value }, '/tmp')).toThrow(`${name}=${JSON.stringify(value)}`);
    expect(() => parseConfig({ [name]: value }, '/tmp')).toThrow(why);
  });

  test('MODEL_PATH may be absolute', () => {
    expect(parseConfig({ MODEL_PATH: '/var/cache/models/abc/model.onnx' }, '/tmp').modelPath).toBe('/var/cache/models/abc/model.onnx');
    expect(parseConfig({ MODEL_PATH: 'm/model.onnx' }, '/srv').modelPath).toBe('/srv/function/m/model.onnx');
  });
});

describe('the runtime and the gateway read durations alike', () => {
  // the gateway refuses a bad duration at deploy (gateway/lib/go-duration.ts), the runtime at start
  // (durations.js, a separate copy: templates import nothing from the gateway): they must agree
  const both = (text: string) => {
    let a: string;
    let b: string;
    try {
      a = String(parseDurationNs(text));
    } catch {
      a = 'error';
    }
    try {
      b = String(parseGoDurationNs(text));
    } catch {
      b = 'error';
    }
    return [a, b];
  };

  test('on 5000 seeded random strings over the grammar\'s alphabet', () => {
    const alphabet = ['0', '1', '5', '9', '.', '+', '-', 's', 'm', 'h', 'n', 'u', 'µ', 'μ', 'd', ' ', 'ms', 'us', 'ns', '00', '99999999999'];
    let seed = 12345;
    const next = () => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed / 2147483648;
    };
    let valid = 0;
    for (let i = 0; i < 5000; i++) {
      const len = 1 + Math.floor(next() * 8);
      const text = Array.from({ length: len }, () => alphabet[Math.floor(next() * alphabet.length)]).join('');
      const [a, b] = both(text);
      expect([text, a]).toEqual([text, b]);
      if (a !== 'error') valid += 1;
    }
    expect(valid).toBeGreaterThan(100); // the sample reaches valid durations too
  });

  test('a disagreement would show', () => {
    expect(both('1.5s')).toEqual(['1500000000', '1500000000']);
    expect(both('1d')).toEqual(['error', 'error']);
  });
});
