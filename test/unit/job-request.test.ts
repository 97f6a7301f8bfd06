import { MAX_DEADLINE_SECONDS, parseJobRequest } from '../../gateway/jobs/job-request';
import { PlatformError } from '../../gateway/errors';
import { checkDatasetName, checkModelName } from '../../gateway/lib/training-names';

const NOW = Date.parse('2025-06-01T00:00:00Z');
const base = { function: 'digits-train', length: 3 };

/** The field a validation error names, or 'ok'. */
function fieldOf(f: () => unknown): string {
  try {
    f();
    return 'ok';
  } catch (e) {
    if (e instanceof PlatformError && e.status === 400) return e.field ?? '(none)';
    throw e;
  }
}

describe('POST /system/jobs body: every bad value is a 400 naming its field', () => {
  test.each([
    // deadlines: the probe's 500s, and the other ways to miss
    { name: 'month 13, day 45, 99:99:99', body: { deadline: '2024-13-45T99:99:99Z' }, field: 'deadline' },
    { name: '1e13 seconds', body: { deadline: 1e13 }, field: 'deadline' },
    { name: '1e300 seconds', body: { deadline: 1e300 }, field: 'deadline' },
    { name: 'negative seconds', body: { deadline: -5 }, field: 'deadline' },
    { name: 'zero seconds', body: { deadline: 0 }, field: 'deadline' },
    { name: 'words', body: { deadline: 'tomorrow' }, field: 'deadline' },
    { name: 'in the past', body: { deadline: '2020-01-01T00:00:00Z' }, field: 'deadline' },
    { name: 'more than 10 years ahead', body: { deadline: '2040-01-01T00:00:00Z' }, field: 'deadline' },
    { name: '30 February', body: { deadline: '2026-02-30T00:00:00Z' }, field: 'deadline' },
    { name: 'offset +24:00', body: { deadline: '2026-01-01T00:00:00+24:00' }, field: 'deadline' },
    { name: 'seconds as a string', body: { deadline: '300' }, field: 'deadline' },
    { name: 'a boolean', body: { deadline: true }, field: 'deadline' },
    { name: 'soft 1e13', body: { soft_deadline: 1e13 }, field: 'soft_deadline' },
    { name: 'soft garbage time', body: { soft_deadline: '2024-13-45T99:99:99Z' }, field: 'soft_deadline' },
    { name: 'soft in the past', body: { soft_deadline: -1 }, field: 'soft_deadline' },
    // the other fields
    { name: 'length 0', body: { length: 0 }, field: 'length' },
    { name: 'length 1e300', body: { length: 1e300 }, field: 'length' },
    { name: 'length as a string', body: { length: '3' }, field: 'length' },
    { name: 'iterations 2.5', body: { length: undefined, iterations: 2.5 }, field: 'iterations' },
    { name: 'iterations 1e13', body: { length: undefined, iterations: 1e13 }, field: 'iterations' },
    { name: 'batch_size -1', body: { batch_size: -1 }, field: 'batch_size' },
    { name: 'batch_size 1e9', body: { batch_size: 1e9 }, field: 'batch_size' },
    { name: 'learning_rate 0', body: { learning_rate: 0 }, field: 'learning_rate' },
    { name: 'learning_rate 1e300', body: { learning_rate: 1e300 }, field: 'learning_rate' },
    { name: 'learning_rate string', body: { learning_rate: '0.1' }, field: 'learning_rate' },
    { name: 'max_workers 0', body: { max_workers: 0 }, field: 'max_workers' },
    { name: 'max_workers 1e6', body: { max_workers: 1e6 }, field: 'max_workers' },
    { name: 'namespace a number', body: { namespace: 5 }, field: 'namespace' },
    // paths reach no harness
    { name: 'dataset /etc/passwd', body: { dataset: '/etc/passwd' }, field: 'dataset' },
    { name: 'dataset ../../../../../etc/hostname', body: { dataset: '../../../../../etc/hostname' }, field: 'dataset' },
    { name: 'dataset data/../../x', body: { dataset: 'data/../../x' }, field: 'dataset' },
    { name: 'dataset hidden', body: { dataset: '.ssh/id_rsa' }, field: 'dataset' },
    { name: 'dataset backslash', body: { dataset: '..\\..\\x' }, field: 'dataset' },
    { name: 'dataset empty', body: { dataset: '' }, field: 'dataset' },
    { name: 'model ../../../../etc/passwd', body: { model: '../../../../etc/passwd' }, field: 'model' },
    { name: 'model with a slash', body: { model: 'a/b' }, field: 'model' },
    { name: 'model a number', body: { model: 3 }, field: 'model' },
    // and what is fine
    { name: 'seconds from now', body: { deadline: 300 }, field: 'ok' },
    { name: '10 years exactly', body: { deadline: MAX_DEADLINE_SECONDS }, field: 'ok' },
    { name: 'RFC3339 with an offset', body: { deadline: '2025-06-01T02:00:00.5+01:00' }, field: 'ok' },
    { name: 'null deadline = best-effort', body: { deadline: null }, field: 'ok' },
    { name: 'dataset in a folder', body: { dataset: 'data/digits.csv', model: 'mlp-wide' }, field: 'ok' },
  ])('$name → $field', ({ body, field }) => {
    expect(fieldOf(() => parseJobRequest({ ...base, ...body }, NOW))).toBe(field);
  });

  test('deadlines are absolute epoch seconds, offsets applied', () => {
    expect(parseJobRequest({ ...base, deadline: 300 }, NOW).deadlineS).toBe((NOW + 300_000) / 1000);
    expect(parseJobRequest({ ...base, deadline: '2025-06-01T02:00:00+01:00' }, NOW).deadlineS).toBe((NOW + 3_600_000) / 1000);
  });
});

describe('dataset and model names (shared with the mlfaas.dataset label)', () => {
  test.each(['data/digits.csv', 'x', 'a_b/c-d.e/f.csv'])('dataset %s is a name', (n) => expect(checkDatasetName(n, 'dataset')).toBe(n));
  test.each(['mlp', 'mlp-wide', 'resnet50_v1.5'])('model %s is a name', (n) => expect(checkModelName(n, 'model')).toBe(n));
  test.each(['/x', 'a//b', 'a/', '../x', 'a/./b', 'a\0b', 'a b'])('dataset %j is refused', (n) => expect(fieldOf(() => checkDatasetName(n, 'f'))).toBe('f'));
  test.each(['..', '.x', 'a..b', '-x', 'a/b', 'x'.repeat(65)])('model %j is refused', (n) => expect(fieldOf(() => checkModelName(n, 'f'))).toBe('f'));
});
