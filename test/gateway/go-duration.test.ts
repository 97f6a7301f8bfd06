/** Go's time.ParseDuration, case by case (values from Go's own time_test.go table and its grammar). */
import { GoDurationError, parseGoDurationMs, parseGoDurationNs } from '../../gateway/lib/go-duration';

const S = 1_000_000_000n;

describe('parseGoDurationNs: what Go accepts', () => {
  test.each([
    ['0', 0n],
    ['5s', 5n * S],
    ['30s', 30n * S],
    ['1478s', 1478n * S],
    ['-5s', -5n * S],
    ['+5s', 5n * S],
    ['-0', 0n],
    ['+0', 0n],
    ['5.0s', 5n * S],
    ['5.6s', 5n * S + 600_000_000n],
    ['5.s', 5n * S],
    ['.5s', 500_000_000n],
    ['1.0s', S],
    ['1.00s', S],
    ['1.004s', S + 4_000_000n],
    ['1.0040s', S + 4_000_000n],
    ['100.00100s', 100n * S + 1_000_000n],
    ['10ns', 10n],
    ['11us', 11_000n],
    ['12µs', 12_000n],
    ['12μs', 12_000n],
    ['13ms', 13_000_000n],
    ['14s', 14n * S],
    ['15m', 15n * 60n * S],
    ['16h', 16n * 3600n * S],
    ['3h30m', (3n * 3600n + 30n * 60n) * S],
    ['10.5s4m', 4n * 60n * S + 10n * S + 500_000_000n],
    ['-2m3.4s', -(2n * 60n * S + 3n * S + 400_000_000n)],
    ['1h2m3s4ms5us6ns', 3723n * S + 4_005_006n],
    ['39h9m14.425s', 140954n * S + 425_000_000n],
    ['52763797000ns', 52763797000n],
    ['0.3333333333333333333h', 1_200_000_000_000n],
    ['9007199254740993ns', 9007199254740993n],
    ['9223372036854775807ns', 9223372036854775807n],
    ['9223372036854775.807us', 9223372036854775807n],
    ['9223372036s854ms775us807ns', 9223372036854775807n],
    ['-9223372036854775808ns', -9223372036854775808n],
    ['-9223372036854775.808us', -9223372036854775808n],
    ['0.100000000000000000000h', 360n * S],
    ['0.830103483285477580700h', 2988372539827n],
    ['0s', 0n],
    ['0.0s', 0n],
    ['00000000000000000000000000000000001s', S],
  ])('%s → %s ns', (s, want) => {
    expect(parseGoDurationNs(s)).toBe(want);
  });
});

describe('parseGoDurationNs: what Go refuses', () => {
  test.each([
    '', '3', '-', '+', 's', '.', '-.', '.s', '+.s', '1d', '1.5d', '5 s', ' 5s', '5s ', '1s-1s', '1s+1s', '--5s', '1e3s', 'abc',
    '3000000h', '9223372036854775808ns', '9223372036854775.808us', '9223372036854ms775us808ns', '-9223372036854775809ns',
    '1h1', '1S', '1H', '1sec', '1mss', 'NaN', 'Infinity', '0x10s', '١s',
  ])('%j is an error', (s) => {
    expect(() => parseGoDurationNs(s)).toThrow(GoDurationError);
  });

  it('quotes the input in its message, as Go does', () => {
    expect(() => parseGoDurationNs('1d')).toThrow('invalid duration "1d": unknown unit "d"');
    expect(() => parseGoDurationNs('3')).toThrow('missing unit');
  });
});

describe('parseGoDurationMs', () => {
  test.each([['250ms', 250], ['1500us', 1.5], ['1m30s', 90_000], ['0', 0]])('%s → %s ms', (s, ms) => {
    expect(parseGoDurationMs(s)).toBe(ms);
  });
});
