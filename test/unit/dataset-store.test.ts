import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PlatformError } from '../../gateway/errors';
import { resolveDataset } from '../../gateway/jobs/dataset-store';

describe('dataset store: names resolve inside the function image or <dataDir>/datasets, never outside', () => {
  const tmp = realpathSync(mkdtempSync(join(tmpdir(), 'mlfaas-ds-')));
  const image = join(tmp, 'image', 'function');
  const store = join(tmp, 'data', 'datasets');
  const roots = { image, store };
  beforeAll(() => {
    mkdirSync(join(image, 'data'), { recursive: true });
    mkdirSync(join(store, 'shared'), { recursive: true });
    writeFileSync(join(image, 'data', 'digits.csv'), '1,2\n');
    writeFileSync(join(store, 'shared', 'big.csv'), '1,2\n');
    writeFileSync(join(store, 'both.csv'), 'store\n');
    writeFileSync(join(image, 'both.csv'), 'image\n');
    writeFileSync(join(tmp, 'secret'), 'no\n');
    symlinkSync('../data/digits.csv', join(image, 'data', 'inside-link.csv')); // stays inside
    symlinkSync(join(tmp, 'secret'), join(store, 'escape.csv')); // leaves the store
    symlinkSync('/etc', join(store, 'etc'));
  });
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  test.each([
    { name: 'data/digits.csv', want: () => join(image, 'data', 'digits.csv') },
    { name: 'shared/big.csv', want: () => join(store, 'shared', 'big.csv') },
    { name: 'both.csv', want: () => join(image, 'both.csv') }, // the image first
    { name: 'data/inside-link.csv', want: () => join(image, 'data', 'digits.csv') },
    { name: 'shared', want: () => join(store, 'shared') },
  ])('$name resolves', ({ name, want }) => expect(resolveDataset(name, roots)).toBe(want()));

  test.each([
    { name: '/etc/passwd', why: /absolute/ },
    { name: '../../../../../etc/hostname', why: /\.\./ },
    { name: 'escape.csv', why: /outside the dataset store/ },
    { name: 'etc/hostname', why: /outside the dataset store/ },
    { name: 'missing.csv', why: /not found/ },
  ])('$name is a 400 on field dataset', ({ name, why }) => {
    let err: unknown;
    try {
      resolveDataset(name, roots);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(PlatformError);
    expect((err as PlatformError).status).toBe(400);
    expect((err as PlatformError).field).toBe('dataset');
    expect((err as PlatformError).message).toMatch(why);
  });

  test('the label names its own field', () => {
    expect(() => resolveDataset('../x', roots, 'annotations.mlfaas.dataset')).toThrow(expect.objectContaining({ field: 'annotations.mlfaas.dataset' }));
  });
});
