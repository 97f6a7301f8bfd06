/**
 * Which `X-Callback-Url` values the async worker may POST results to. Pure: a URL string and the
 * configured allow-list in, a verdict out. No DNS is consulted; names are judged as written.
 */

/** A callback target that passed the policy, or the reason it did not. */
export type CallbackVerdict = { ok: true; url: URL } | { ok: false; reason: string };

const SCHEMES = new Set(['http:', 'https:']);

/** Cloud metadata services reachable by name (GCP; Azure and AWS use 169.254.169.254). */
const METADATA_NAMES = new Set(['metadata.google.internal', 'metadata.goog', 'metadata']);

/** AWS's IPv6 instance metadata endpoint (outside fe80::/10, so named here). */
const METADATA_V6 = new Set(['fd00:ec2::254']);

const IPV4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;

/** `169.254.0.0/16`: IPv4 link-local, where cloud metadata services answer. */
function linkLocalV4(host: string): boolean {
  const m = IPV4.exec(host);
  return !!m && Number(m[1]) === 169 && Number(m[2]) === 254;
}

/** Expands the hex groups of an IPv6 literal (WHATWG-normalised, no brackets) to 8 numbers. */
function v6Groups(host: string): number[] | undefined {
  const [head, tail, extra] = host.split('::');
  if (extra !== undefined) return undefined;
  const part = (s: string | undefined) => (s ? s.split(':').map((g) => parseInt(g, 16)) : []);
  const h = part(head);
  const t = part(tail);
  if (tail === undefined) return h.length === 8 ? h : undefined;
  return [...h, ...Array<number>(8 - h.length - t.length).fill(0), ...t];
}

/** fe80::/10 (link-local), and IPv4-mapped `::ffff:169.254.x.y`. */
function linkLocalV6(host: string): boolean {
  const g = v6Groups(host);
  if (!g || g.length !== 8 || g.some((n) => Number.isNaN(n))) return false;
  if ((g[0] & 0xffc0) === 0xfe80) return true;
  const mapped = g.slice(0, 5).every((n) => n === 0) && g[5] === 0xffff;
  return mapped && g[6] === 0xa9fe; // 169.254 in the high half of the mapped address
}

/**
 * Parses `MLFAAS_CALLBACK_ALLOW`-style entries (`host` or `host:port`, `[v6]` or `[v6]:port`),
 * lower-cased; throws naming the first entry that is neither.
 */
export function parseAllowList(raw: string): string[] {
  const out: string[] = [];
  for (const e of raw.split(',').map((s) => s.trim().toLowerCase())) {
    if (e === '') continue;
    let u: URL;
    try {
      u = new URL(`http://${e}`);
    } catch {
      throw new Error(`"${e}" is not a host name or host:port`);
    }
    if (u.pathname !== '/' || u.search || u.hash || u.username || u.password) {
      throw new Error(`"${e}" is not a host name or host:port`);
    }
    out.push(e.replace(/\.$/, ''));
  }
  return out;
}

const defaultPort = (u: URL) => u.port || (u.protocol === 'https:' ? '443' : '80');

/** Whether `u` matches an allow-list entry (`host` matches any port; `host:port` only that port). */
function allowed(u: URL, allow: readonly string[]): boolean {
  const host = u.hostname.replace(/\.$/, '');
  const bare = host.replace(/^\[|\]$/g, '');
  const candidates = new Set([host, bare, `${host}:${defaultPort(u)}`]);
  return allow.some((e) => candidates.has(e));
}

/**
 * The callback policy: an absolute http(s) URL whose host is not link-local (169.254.0.0/16,
 * fe80::/10) or a cloud metadata name, and, when `allow` is non-empty, whose host (or host:port)
 * is listed. Refused hosts stay refused even when listed.
 */
export function checkCallbackUrl(raw: string, allow: readonly string[] = []): CallbackVerdict {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return { ok: false, reason: `"${raw}" is not an absolute URL` };
  }
  if (!SCHEMES.has(u.protocol)) return { ok: false, reason: `scheme "${u.protocol.replace(/:$/, '')}" is not allowed (http or https)` };
  const host = u.hostname.replace(/\.$/, '');
  if (host === '') return { ok: false, reason: `"${raw}" has no host` };
  const v6 = host.startsWith('[') ? host.slice(1, -1) : undefined;
  if (v6 !== undefined ? linkLocalV6(v6) || METADATA_V6.has(v6) : linkLocalV4(host) || METADATA_NAMES.has(host)) {
    return { ok: false, reason: `host ${host} is a link-local or cloud metadata address` };
  }
  if (allow.length > 0 && !allowed(u, allow)) {
    return { ok: false, reason: `host ${u.host} is not in MLFAAS_CALLBACK_ALLOW` };
  }
  return { ok: true, url: u };
}
