import { randomBytes } from 'node:crypto';
import {
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { basename, join } from 'node:path';
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

/** The symlink in an image's folder naming its current version. */
const CURRENT = 'current';
/** Leftovers of a build that died half-way are removed after this, ms. */
const STALE_TEMP_MS = 10 * 60_000;

/**
 * The local image store, written by `mlfaas build` (shrinkwrap: template + handler), read by the
 * local provider. Images are immutable: each build is a new complete version directory
 * `root/<image>/v-<id>/`, and `root/<image>/current` (a symlink) is switched to it with one
 * atomic rename. A replica starts from the version `find` resolved and that directory is never
 * changed under it; old versions are deleted only when they are neither current nor the one
 * before, and no process runs in them (cwd or command line, from /proc).
 */
export class ImageStore {
  constructor(readonly root: string) {}

  /** The image's folder (its versions and the `current` link), always a direct child of `root` (`.`, `..` and empty names are refused). */
  dirOf(image: string): string {
    const name = imageDirName(image);
    if (name === '' || name === '.' || name === '..') {
      throw invalid('image', `"${image}" does not name a directory inside the image store`);
    }
    return join(this.root, name);
  }

  /** The manifest of the current version (`dir` = that version's directory), a built-in one, or undefined. */
  find(image: string): ImageManifest | undefined {
    const home = this.dirOf(image);
    for (let attempt = 0; attempt < 3; attempt++) {
      const dir = currentVersion(home);
      if (!dir) break;
      try {
        const m = JSON.parse(readFileSync(join(dir, MANIFEST), 'utf8')) as ImageManifest;
        return { ...m, dir };
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e; // collected between readlink and read: look again
      }
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

  /** Copies `srcDir` into the store as a new version of `image` and makes it current (atomically). */
  put(image: string, srcDir: string, manifest: Omit<ImageManifest, 'dir' | 'image' | 'builtAt'>): ImageManifest {
    const home = this.dirOf(image);
    mkdirSync(this.root, { recursive: true });
    migrateLegacy(home);
    mkdirSync(home, { recursive: true });
    const previous = currentVersion(home);
    const id = `v-${Date.now().toString(36)}-${randomBytes(4).toString('hex')}`;
    const tmp = join(home, `.tmp-${id}`);
    cpSync(srcDir, tmp, { recursive: true, dereference: true });
    const full: ImageManifest = { image, builtAt: new Date().toISOString(), ...manifest };
    writeFileSync(join(tmp, MANIFEST), JSON.stringify(full, null, 2));
    const dir = join(home, id);
    renameSync(tmp, dir); // complete before anything can name it
    const link = join(home, `.link-${id}`);
    symlinkSync(id, link);
    renameSync(link, join(home, CURRENT)); // the switch: readers see the old version or the new one
    collectVersions(home, new Set([id, ...(previous ? [basename(previous)] : [])]));
    return { ...full, dir: realpathSync(dir) };
  }
}

/** The current version's directory of an image folder, or the folder itself in the old layout. */
function currentVersion(home: string): string | undefined {
  try {
    return realpathSync(join(home, CURRENT));
  } catch {
    return existsSync(join(home, MANIFEST)) ? home : undefined;
  }
}

/** Old layout (files directly in the image folder): becomes version `v-legacy`, by renames only. */
function migrateLegacy(home: string): void {
  if (!existsSync(join(home, MANIFEST)) || lstatExists(join(home, CURRENT))) return;
  const aside = `${home}.legacy-${process.pid}`;
  renameSync(home, aside); // a replica running in it keeps its cwd: a rename moves no inode
  mkdirSync(home);
  renameSync(aside, join(home, 'v-legacy'));
  symlinkSync('v-legacy', join(home, CURRENT));
}

function lstatExists(p: string): boolean {
  try {
    lstatSync(p);
    return true;
  } catch {
    return false;
  }
}

/** Deletes versions not in `keep` that no process uses, and leftovers of builds that died. */
function collectVersions(home: string, keep: Set<string>): void {
  const used = pathsInUse(); // real paths, as /proc reports them
  const real = realpathSync(home);
  for (const e of readdirSync(home)) {
    const p = join(real, e);
    if (e.startsWith('.tmp-') || e.startsWith('.link-')) {
      if (Date.now() - lstatSync(p).mtimeMs > STALE_TEMP_MS) rmSync(p, { recursive: true, force: true });
      continue;
    }
    if (!e.startsWith('v-') || keep.has(e)) continue;
    if (used.some((u) => u === p || u.startsWith(p + '/'))) continue;
    rmSync(p, { recursive: true, force: true });
  }
}

/**
 * Working directories and command-line words (absolute paths) of every process this user can
 * see in /proc. Processes of other users are invisible here, so a store shared with replicas
 * running as another user must be collected by root (or keeps its versions).
 */
/** Set by the agent in every replica: the host path of the image version it runs. */
export const IMAGE_DIR_ENV = 'MLFAAS_IMAGE_DIR';

export function pathsInUse(): string[] {
  const out: string[] = [];
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((e) => /^\d+$/.test(e));
  } catch {
    return out;
  }
  for (const pid of pids) {
    try {
      out.push(readlinkSync(`/proc/${pid}/cwd`));
    } catch {
      // gone, or not ours
    }
    try {
      for (const w of readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')) if (w.startsWith('/')) out.push(w);
    } catch {
      // gone
    }
    try {
      // a sandboxed replica's cwd is its bind mount (/var/openfaas/function): it names its image here
      const env = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').find((e) => e.startsWith(`${IMAGE_DIR_ENV}=`));
      if (env) out.push(env.slice(IMAGE_DIR_ENV.length + 1));
    } catch {
      // gone, or not ours
    }
  }
  return out;
}
