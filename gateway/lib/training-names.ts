import { invalid } from '../errors';

/** Longest dataset name (characters). */
export const MAX_DATASET_NAME = 255;
/** Longest model name (characters). */
export const MAX_MODEL_NAME = 64;

const SEGMENT = /^[A-Za-z0-9_][A-Za-z0-9._-]*$/;
const MODEL = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/**
 * Throws a validation error naming `field` unless `value` is a plain relative dataset name:
 * `/`-separated segments of letters, digits, `.`, `_`, `-`, none empty, none starting with `.`
 * (so no `..`, no hidden files), no leading `/`, no backslash. Pure: whether it exists, and that it
 * stays inside the dataset store after symlinks, is `resolveDataset`'s (`gateway/jobs/dataset-store.ts`).
 */
export function checkDatasetName(value: unknown, field: string): string {
  if (typeof value !== 'string' || value === '') throw invalid(field, 'must be a non-empty string: a dataset name such as data/train.csv');
  if (value.length > MAX_DATASET_NAME) throw invalid(field, `is longer than ${MAX_DATASET_NAME} characters`);
  const shown = JSON.stringify(value);
  if (value.startsWith('/')) throw invalid(field, `${shown} is an absolute path; give a name inside the dataset store (e.g. data/train.csv)`);
  const segments = value.split('/');
  for (const s of segments) {
    if (s === '..' || s === '.') throw invalid(field, `${shown} contains "${s}"; dataset names stay inside the dataset store`);
    if (!SEGMENT.test(s)) {
      throw invalid(field, `${shown} is not a dataset name: '/'-separated parts of letters, digits, '.', '_' and '-', not starting with '.'`);
    }
  }
  return value;
}

/**
 * Throws a validation error naming `field` unless `value` is a model name (not a path): letters,
 * digits, `.`, `_`, `-`, starting with a letter or digit, at most 64 characters, no `..`.
 */
export function checkModelName(value: unknown, field: string): string {
  if (typeof value !== 'string' || value === '') throw invalid(field, 'must be a non-empty string: a model name such as mlp');
  if (value.length > MAX_MODEL_NAME) throw invalid(field, `is longer than ${MAX_MODEL_NAME} characters`);
  if (!MODEL.test(value) || value.includes('..')) {
    throw invalid(field,
      `${JSON.stringify(value)} is not a model name: letters, digits, '.', '_' and '-', starting with a letter or digit (a name, not a path)`);
  }
  return value;
}
