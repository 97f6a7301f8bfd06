/**
 * Deploy and update with bad per-function timeouts (`envVars.read_timeout` / `write_timeout` /
 * `exec_timeout`, Go durations) and bad async retry annotations (`com.openfaas.retry.*`): each a
 * 400 naming the field (issue 25, part 5).
 */
import { aFunction } from '../../helpers/fixtures';
import { Case, describeValue, invalid } from './case';

/** Not Go durations, or out of bounds (negative, over a day, over int64 nanoseconds). */
const BAD_DURATIONS = ['1d', '-1s', '', ' ', 'soon', '25h', '1e3s', '1 s', '9223372036854775808ns', '0x1s', '1.5.5s', '5S', '.s', '-', '١s'];

const BAD_RETRY: Array<[string, string[]]> = [
  ['com.openfaas.retry.attempts', ['0', '-1', '2.5', '101', 'ten', '', '1e2', '0x10']],
  ['com.openfaas.retry.codes', ['200', '5xx', '429;503', '600', '99', '4290', '429,abc', '3xx,503']],
  ['com.openfaas.retry.min_wait', ['10x', '-1s', '2h', 'later']],
  ['com.openfaas.retry.max_wait', ['forever', '2h', '-5s', '1d']],
];

export function timeoutCases(): Case[] {
  const cases: Case[] = [];
  const deploy = (name: string, over: { envVars?: Record<string, string>; annotations?: Record<string, string> }, field: string, method = 'POST'): Case => {
    const b = aFunction(method === 'POST' ? 'good' : 'exists').minScale(0).build();
    return { name: `${method === 'POST' ? 'deploy' : 'update'}: ${name}`, method, path: '/system/functions', body: { ...b, ...over }, ...invalid(field) };
  };
  for (const key of ['read_timeout', 'write_timeout', 'exec_timeout']) {
    for (const v of BAD_DURATIONS) cases.push(deploy(`envVars.${key}=${describeValue(v)}`, { envVars: { [key]: v } }, `envVars.${key}`));
    cases.push(deploy(`envVars.${key}=1d (update)`, { envVars: { [key]: '1d' } }, `envVars.${key}`, 'PUT'));
  }
  for (const [key, values] of BAD_RETRY) {
    for (const v of values) cases.push(deploy(`annotation ${key}=${describeValue(v)}`, { annotations: { [key]: v } }, `annotations.${key}`));
    cases.push(deploy(`annotation ${key}=${describeValue(values[0])} (update)`, { annotations: { [key]: values[0] } }, `annotations.${key}`, 'PUT'));
  }
  cases.push(deploy('min_wait above max_wait', { annotations: { 'com.openfaas.retry.min_wait': '10s', 'com.openfaas.retry.max_wait': '1s' } },
    'annotations.com.openfaas.retry.min_wait'));
  return cases;
}
