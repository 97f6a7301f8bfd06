/**
 * Which `X-Callback-Url` values the async worker may POST results to. Pure: a URL string and the
 * configured allow-list in, a verdict out. Twice: `checkCallbackUrl` judges the URL as written
 * (at submission, and again before delivery); `vetResolved` judges every address its host name
 * resolved to (at delivery, by `callback-delivery.ts`, which connects only to the vetted address).
 */
import { addressRisk, isIpLiteral, nameRisk } from './callback-address';

/** A callback target that passed the policy, or the reason it did not. */
export type CallbackVerdict = { ok: true; url: URL } | { ok: false; reason: string };

const SCHEMES = new Set(['http:', 'https:']);

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
export function allowed(u: URL, allow: readonly string[]): boolean {
  const host = u.hostname.replace(/\.$/, '');
  const bare = host.replace(/^\[|\]$/g, '');
  const candidates = new Set([host, bare, `${host}:${defaultPort(u)}`]);
  return allow.some((e) => candidates.has(e));
}

/**
 * The callback policy on the URL as written: an absolute http(s) URL whose host is not a refused
 * IP literal (link-local 169.254.0.0/16 and fe80::/10, cloud metadata, unspecified, or one of
 * those embedded in an IPv6 address: see `addressRisk`) nor a metadata name or a wildcard-DNS
 * spelling of a refused address (`nameRisk`), and, when `allow` is non-empty, whose host (or
 * host:port) is listed. Refused literals and names stay refused even when listed. IPv4 numbers in
 * other spellings (`2852039166`, `0xa9fea9fe`, `0251.0376.0251.0376`) and IPv6 with a dotted tail
 * reach here normalised by `new URL`.
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
  const bare = host.replace(/^\[|\]$/g, '');
  const why = isIpLiteral(bare) ? addressRisk(bare) : nameRisk(host);
  if (why) return { ok: false, reason: `host ${host} is ${why}` };
  if (allow.length > 0 && !allowed(u, allow)) {
    return { ok: false, reason: `host ${u.host} is not in MLFAAS_CALLBACK_ALLOW` };
  }
  return { ok: true, url: u };
}

/** The address a delivery may connect to, or why it may not connect at all. */
export type AddressVerdict = { ok: true; address: string } | { ok: false; reason: string };

/**
 * Judges the addresses the host name of `u` (already accepted by `checkCallbackUrl`) resolved to:
 * one refused address refuses the host (a name with a metadata address among its answers is not
 * a callback receiver), unless the operator listed the host in `allow`. Otherwise the first
 * address is the one to connect to. `addresses` must not be empty.
 */
export function vetResolved(u: URL, addresses: readonly string[], allow: readonly string[] = []): AddressVerdict {
  const listed = allow.length > 0 && allowed(u, allow);
  const host = u.hostname.replace(/\.$/, '');
  for (const a of addresses) {
    const why = addressRisk(a);
    if (why && !listed) return { ok: false, reason: `host ${host} resolves to ${a}, ${why}` };
  }
  return { ok: true, address: addresses[0] };
}
