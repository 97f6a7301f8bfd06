import { invalid } from '../errors';

/**
 * A model fetched by URI instead of baked into the image (issue 25, part 4): annotations
 * `mlfaas.model.uri` and `mlfaas.model.sha256`. Pure validation at deploy; no I/O (whether the
 * URI answers is found out by the node that fetches it, see docs/models.md).
 */
export interface ModelSource {
  /** The URI as given (`file:///path/in/the/store` or `http(s)://host/path`). */
  uri: string;
  scheme: 'file' | 'http' | 'https';
  /** Lower-case hex SHA-256 of the model file: the cache key and the check of every download. */
  sha256: string;
  /** `file://` only: the path inside the model store, relative, without `.` or `..` segments. */
  storePath?: string;
}

export const MODEL_URI_KEYS = { uri: 'mlfaas.model.uri', sha256: 'mlfaas.model.sha256' } as const;

/** Longest URI accepted (bytes). */
export const MODEL_URI_MAX = 2048;

/** The model version a replica reports (v2 metadata `versions`): the sha256's first 12 hex. */
export const modelVersionOf = (sha256: string) => sha256.slice(0, 12);

type Lookup = (key: string) => { value: string | undefined; field: string };

/** A `file://` URI's path: decoded, relative to the model store, no segment that could leave it. */
function storePath(url: URL, field: string, raw: string): string {
  if (url.host !== '' && url.host !== 'localhost') {
    throw invalid(field, `"${raw}": a file:// URI names a path in the platform's model store; write file:///<path> (host "${url.host}" given)`);
  }
  if (url.search || url.hash) throw invalid(field, `"${raw}": a file:// URI takes no query or fragment`);
  // segments as written: URL() already folded "." and ".." away, so look at the raw text too
  const written = raw.replace(/^file:\/\/(localhost)?/i, '').split(/[?#]/)[0];
  let decoded: string;
  try {
    decoded = decodeURIComponent(written);
  } catch {
    throw invalid(field, `"${raw}": bad percent-encoding`);
  }
  if (decoded.includes('\0') || decoded.includes('\\')) throw invalid(field, `"${raw}": the path must not contain NUL or backslashes`);
  const segs = decoded.split('/').filter((s) => s !== '');
  if (segs.some((s) => s === '.' || s === '..')) {
    throw invalid(field, `"${raw}": the path must not contain "." or ".." segments (it must stay in the model store)`);
  }
  if (!segs.length) throw invalid(field, `"${raw}": names no file in the model store`);
  return segs.join('/');
}

/** Parses and checks a model URI; throws a 400 naming `field`. */
export function parseModelUri(raw: string, field: string): Omit<ModelSource, 'sha256'> {
  if (raw.trim() === '') throw invalid(field, 'must be a non-empty URI');
  if (Buffer.byteLength(raw) > MODEL_URI_MAX) throw invalid(field, `is ${Buffer.byteLength(raw)} bytes; at most ${MODEL_URI_MAX}`);
  if (/[\s\x00-\x1f\x7f]/.test(raw)) throw invalid(field, 'must not contain whitespace or control characters');
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalid(field, `"${raw}" is not a URI (file:///<path in the model store>, http:// or https://)`);
  }
  const scheme = url.protocol.slice(0, -1).toLowerCase();
  if (scheme !== 'file' && scheme !== 'http' && scheme !== 'https') {
    throw invalid(field, `scheme "${scheme}:" is not supported (file://, http:// or https://)`);
  }
  if (url.username || url.password || /^[a-z]+:\/\/[^/?#]*@/i.test(raw)) {
    throw invalid(field, 'must not contain credentials (user:password@); the registry must be readable without them');
  }
  if (scheme === 'file') return { uri: raw, scheme, storePath: storePath(url, field, raw) };
  if (!url.hostname) throw invalid(field, `"${raw}" names no host`);
  if (url.hash) throw invalid(field, `"${raw}": an http(s) URI takes no fragment`);
  return { uri: raw, scheme };
}

/** `mlfaas.model.sha256`: 64 hex digits (any case; kept lower-case). */
export function parseSha256(raw: string | undefined, field: string): string {
  if (raw === undefined || raw === '') throw invalid(field, `is required with ${MODEL_URI_KEYS.uri}: the model's SHA-256, 64 hex digits`);
  const v = raw.trim();
  if (!/^[0-9a-fA-F]{64}$/.test(v)) throw invalid(field, `"${raw.length > 80 ? raw.slice(0, 77) + '...' : raw}" is not a SHA-256 (64 hex digits)`);
  return v.toLowerCase();
}

/**
 * The function's model source from its annotations (or labels), or undefined when it sets no
 * `mlfaas.model.uri`. A sha256 without a uri is refused too: it would silently do nothing.
 */
export function parseModelSource(get: Lookup): ModelSource | undefined {
  const uri = get(MODEL_URI_KEYS.uri);
  const sha = get(MODEL_URI_KEYS.sha256);
  if (uri.value === undefined) {
    if (sha.value !== undefined) throw invalid(sha.field, `is set without ${MODEL_URI_KEYS.uri}`);
    return undefined;
  }
  const parsed = parseModelUri(uri.value, uri.field);
  return { ...parsed, sha256: parseSha256(sha.value, sha.field.replace(/^labels\./, uri.field.startsWith('annotations.') ? 'annotations.' : 'labels.')) };
}
