import { cpSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ErrorCode, invalid, PlatformError } from '../../errors';

/** How a replica of an image is run. */
export type RunMode =
  /** fprocess is an HTTP server on $PORT (our templates, of-watchdog http mode). */
  | 'http'
  /** A fork-per-request watchdog pipes each request body to fprocess's stdin (OpenFaaS classic). */
  | 'classic'
  /** Runs only as a training job, never as a serving replica. */
  | 'job';

/** `mlfaas-image.json` at the root of a shrinkwrapped image directory. */
export interface ImageManifest {
  image: string;
  language: string;
  kind: 'inference' | 'training' | 'classic';
  mode: RunMode;
  /** Command line; a deployment's `envProcess` overrides it. */
  fprocess?: string;
  health?: string;
  readiness?: string;
  /** RFC3339 */
  builtAt: string;
  /** Absolute directory holding the image's files (absent for built-in images). */
  dir?: string;
}

export const MANIFEST = 'mlfaas-image.json';

/** Images that need no build: OpenFaaS's classic watchdog bases, which run any `fprocess`. */
const BUILTIN = [/^(ghcr\.io\/)?openfaas\/(alpine|classic-watchdog)(:.*)?$/, /^functions\/alpine(:.*)?$/];

/** Directory-name form of an image reference: `ghcr.io/x/y:1` → `ghcr.io_x_y_1`. */
export const imageDirName = (image: string) => image.replace(/[^A-Za-z0-9._-]/g, '_');

/**
 * The local image store: one directory per image under `root`, written by `mlfaas build`
 * (shrinkwrap: template + handler), read by the local provider.
 */
export class ImageStore {
  constructor(readonly root: string) {}

  /** The image's directory, always a direct child of `root` (`.`, `..` and empty names are refused). */
  dirOf(image: string): string {
    const name = imageDirName(image);
    if (name === '' || name === '.' || name === '..') {
      throw invalid('image', `"${image}" does not name a directory inside the image store`);
    }
    return join(this.root, name);
  }

  /** The manifest, a built-in one, or undefined. */
  find(image: string): ImageManifest | undefined {
    const file = join(this.dirOf(image), MANIFEST);
    if (existsSync(file)) {
      const m = JSON.parse(readFileSync(file, 'utf8')) as ImageManifest;
      return { ...m, dir: this.dirOf(image) };
    }
    if (BUILTIN.some((re) => re.test(image))) {
      return { image, language: 'dockerfile', kind: 'classic', mode: 'classic', builtAt: new Date(0).toISOString() };
    }
    return undefined;
  }

  /** Like `find`, but a missing image is a 400 that names the image and the command that builds it. */
  require(image: string): ImageManifest {
    const m = this.find(image);
    if (!m) {
      throw new PlatformError(
        ErrorCode.ImageNotFound,
        `image "${image}" is not in the local image store (${this.root}); build it with: mlfaas build -f stack.yml`,
        'image',
      );
    }
    return m;
  }

  /** Copies `srcDir` into the store as `image`, atomically replacing an older build. */
  put(image: string, srcDir: string, manifest: Omit<ImageManifest, 'dir' | 'image' | 'builtAt'>): ImageManifest {
    mkdirSync(this.root, { recursive: true });
    const final = this.dirOf(image);
    const tmp = `${final}.tmp-${process.pid}`;
    rmSync(tmp, { recursive: true, force: true });
    cpSync(srcDir, tmp, { recursive: true, dereference: true });
    const full: ImageManifest = { image, builtAt: new Date().toISOString(), ...manifest };
    writeFileSync(join(tmp, MANIFEST), JSON.stringify(full, null, 2));
    const old = `${final}.old-${process.pid}`;
    if (existsSync(final)) renameSync(final, old);
    renameSync(tmp, final);
    rmSync(old, { recursive: true, force: true });
    return { ...full, dir: final };
  }
}
