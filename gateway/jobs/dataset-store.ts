import { existsSync, realpathSync, statSync } from 'node:fs';
import { join, sep } from 'node:path';
import { invalid } from '../errors';
import { checkDatasetName } from '../lib/training-names';

/** The platform's dataset store under the data dir: `<dataDir>/datasets`. */
export const datasetStoreDir = (dataDir: string) => join(dataDir, 'datasets');

/** Where a dataset name is looked up, in order. */
export interface DatasetRoots {
  /** The function's own files in its image (`<image>/function`): what it ships, e.g. `data/digits.csv`. */
  image: string;
  /** `<dataDir>/datasets`: datasets put there for every training function. */
  store: string;
}

/**
 * The absolute real path of dataset `name` (a file or a directory), looked up first in the
 * function's image, then in the platform store; a 400 naming `field` unless `name` is a plain
 * relative name (`checkDatasetName`) that exists in one of them and whose real path (symlinks
 * followed) stays inside that root. The harness gets this path, never the name.
 */
export function resolveDataset(name: string, roots: DatasetRoots, field = 'dataset'): string {
  checkDatasetName(name, field);
  for (const root of [roots.image, roots.store]) {
    const candidate = join(root, name);
    if (!existsSync(candidate) || !existsSync(root)) continue;
    const realRoot = realpathSync(root);
    const real = realpathSync(candidate);
    if (!real.startsWith(realRoot + sep)) {
      throw invalid(field, `${JSON.stringify(name)} resolves outside the dataset store (a symbolic link leaves ${root})`);
    }
    const st = statSync(real);
    if (!st.isFile() && !st.isDirectory()) throw invalid(field, `${JSON.stringify(name)} is neither a file nor a directory`);
    return real;
  }
  throw invalid(field,
    `dataset ${JSON.stringify(name)} not found: looked in the function's image (${join(roots.image, name)}) and the dataset store ` +
    `(${join(roots.store, name)})`);
}
