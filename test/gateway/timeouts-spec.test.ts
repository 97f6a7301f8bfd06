/** Per-function timeouts and async retry annotations: parsing, deploy validation, back-off (issue 25). */
import { PlatformError } from '../../gateway/errors';
import { parseDeployment } from '../../gateway/registry/function-spec';
import {
  DEFAULT_RETRY_CODES, invocationTimeoutMs, parseFunctionTimeouts, parseRetryPolicy, retryDelayMs, RetryPolicy,
} from '../../gateway/registry/timeouts-spec';

const DEF: RetryPolicy = { attempts: 3, codes: DEFAULT_RETRY_CODES, minWaitMs: 10_000, maxWaitMs: 120_000 };
const fieldOf = (f: () => unknown) => {
  try {
    f();
  } catch (e) {
    return e instanceof PlatformError ? `${e.status} ${e.field}` : String(e);
  }
  return 'no error';
};

describe('parseFunctionTimeouts', () => {
  test.each([
    [{}, {}],
    [{ exec_timeout: '30s' }, { execMs: 30_000 }],
    [{ exec_timeout: '1m30s', read_timeout: '250ms', write_timeout: '5' }, { execMs: 90_000, readMs: 250, writeMs: 5000 }],
    [{ exec_timeout: '0' }, {}],
    [{ exec_timeout: '0s' }, {}],
    [{ other: 'x' }, {}],
  ])('%j → %j', (env, want) => {
    expect(parseFunctionTimeouts(env as Record<string, string>)).toEqual(want);
  });

  test.each([
    ['exec_timeout', '30'], ['exec_timeout', '1d'], ['read_timeout', '-1s'], ['write_timeout', ''], ['exec_timeout', '25h'],
    ['exec_timeout', '1e3s'], ['read_timeout', 'soon'], ['exec_timeout', '9223372036854775808ns'],
  ])('%s=%j is a 400 naming envVars.%s at deploy', (key, value) => {
    const body = { service: 'f', image: 'x/y:1', envVars: { [key]: value } };
    if (value === '30') {
      expect(parseDeployment(body).envVars[key]).toBe('30'); // whole seconds, as the watchdogs accept
      return;
    }
    expect(fieldOf(() => parseDeployment(body))).toBe(`400 envVars.${key}`);
  });

  it('invocationTimeoutMs: exec_timeout + grace, else write_timeout + grace, else the global', () => {
    expect(invocationTimeoutMs({ execMs: 2000, writeMs: 9000 }, 60_000)).toBe(2500);
    expect(invocationTimeoutMs({ writeMs: 9000 }, 60_000)).toBe(9500);
    expect(invocationTimeoutMs({ readMs: 9000 }, 60_000)).toBe(60_000);
    expect(invocationTimeoutMs(undefined, 60_000)).toBe(60_000);
  });
});

describe('parseRetryPolicy', () => {
  test.each([
    [{}, DEF],
    [{ 'com.openfaas.retry.attempts': '5' }, { ...DEF, attempts: 5 }],
    [{ 'com.openfaas.retry.codes': '429, 503' }, { ...DEF, codes: [429, 503] }],
    [{ 'com.openfaas.retry.codes': '500 502,502' }, { ...DEF, codes: [500, 502] }],
    [{ 'com.openfaas.retry.codes': '' }, { ...DEF, codes: [] }],
    [{ 'com.openfaas.retry.min_wait': '100ms', 'com.openfaas.retry.max_wait': '1s' }, { ...DEF, minWaitMs: 100, maxWaitMs: 1000 }],
    [{ 'com.openfaas.retry.max_wait': '1s' }, { ...DEF, minWaitMs: 1000, maxWaitMs: 1000 }],
    [{ 'com.openfaas.retry.min_wait': '5m' }, { ...DEF, minWaitMs: 300_000, maxWaitMs: 300_000 }],
  ])('%j', (ann, want) => {
    expect(parseRetryPolicy(ann, DEF)).toEqual(want);
  });

  test.each([
    ['com.openfaas.retry.attempts', '0'], ['com.openfaas.retry.attempts', '-1'], ['com.openfaas.retry.attempts', '2.5'],
    ['com.openfaas.retry.attempts', '101'], ['com.openfaas.retry.attempts', 'ten'], ['com.openfaas.retry.codes', '200'],
    ['com.openfaas.retry.codes', '5xx'], ['com.openfaas.retry.codes', '429;503'], ['com.openfaas.retry.codes', '600'],
    ['com.openfaas.retry.min_wait', '10'], ['com.openfaas.retry.min_wait', '-1s'], ['com.openfaas.retry.max_wait', '2h'],
    ['com.openfaas.retry.max_wait', 'forever'],
  ])('%s=%j is a 400 naming annotations.%s at deploy', (key, value) => {
    const body = { service: 'f', image: 'x/y:1', annotations: { [key]: value } };
    if (value === '10') {
      expect(parseDeployment(body).annotations[key]).toBe('10');
      return;
    }
    expect(fieldOf(() => parseDeployment(body))).toBe(`400 annotations.${key}`);
  });

  it('min_wait above max_wait, both set: a 400 naming min_wait', () => {
    const annotations = { 'com.openfaas.retry.min_wait': '2s', 'com.openfaas.retry.max_wait': '1s' };
    expect(fieldOf(() => parseDeployment({ service: 'f', image: 'x/y:1', annotations }))).toBe('400 annotations.com.openfaas.retry.min_wait');
  });
});

describe('retryDelayMs', () => {
  const p = { minWaitMs: 100, maxWaitMs: 1000 };
  test.each([
    [1, undefined, 100], [2, undefined, 200], [3, undefined, 400], [4, undefined, 800], [5, undefined, 1000], [60, undefined, 1000],
    [1, 0, 100], [1, 0.5, 500], [3, 30, 1000],
  ])('retry %s, Retry-After %s → %s ms', (retry, after, want) => {
    expect(retryDelayMs(p, retry, after)).toBe(want);
  });
});
