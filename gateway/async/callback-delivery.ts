import { lookup as dnsLookup } from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import { isIPv6, LookupFunction } from 'node:net';
import { isIpLiteral } from './callback-address';
import { checkCallbackUrl, vetResolved } from './callback-policy';
import { CallbackRefused } from './callback-refused';

/** Every address a host name resolves to, as `dns.lookup(host, { all: true })` gives them. */
export type ResolveAll = (host: string) => Promise<{ address: string; family: number }[]>;

/** The system resolver (`/etc/hosts`, then DNS), all addresses. */
export const systemResolve: ResolveAll = (host) => dnsLookup(host, { all: true });

export interface DeliveryOptions {
  /** Whole-request limit (connect, send, response), ms. */
  timeoutMs: number;
  /** `MLFAAS_CALLBACK_ALLOW` entries; empty = any host the policy does not refuse. */
  allow: readonly string[];
  /** Resolves the callback's host name; `systemResolve` when absent (tests map names here). */
  resolve?: ResolveAll;
}

/**
 * A `lookup` for `net.connect` that answers `address` whatever it is asked: the socket goes to
 * the address that was vetted, with no second resolution to rebind. Host and SNI keep the name.
 */
function pinnedLookup(address: string): LookupFunction {
  const family = isIPv6(address) ? 6 : 4;
  return (_host, options, cb) => (options.all ? cb(null, [{ address, family }]) : cb(null, address, family));
}

/**
 * POSTs `body` with `headers` to the callback URL `raw`, and resolves with the answer's status.
 *
 * The URL is judged by the policy again (it may have been queued under another allow-list), its
 * host name resolved once and every address judged (`vetResolved`); the connection then goes to
 * the vetted address only, with the URL's host name in `Host` and in TLS SNI (certificates are
 * verified against it). Redirects are not followed.
 *
 * Rejects with `CallbackRefused` when the policy refuses (permanent), and with another Error for
 * what may pass (resolution failure, connection error, timeout, a 5xx answer).
 */
export async function deliverCallback(raw: string, body: Buffer, headers: Record<string, string>, opts: DeliveryOptions): Promise<number> {
  const v = checkCallbackUrl(raw, opts.allow);
  if (!v.ok) throw new CallbackRefused(v.reason);
  const u = v.url;
  const host = u.hostname.replace(/^\[|\]$/g, '');
  let address = host; // a literal was judged as written
  if (!isIpLiteral(host)) {
    const found = await (opts.resolve ?? systemResolve)(host);
    if (found.length === 0) throw new Error(`callback host ${host} resolved to no address`);
    const r = vetResolved(u, found.map((a) => a.address), opts.allow);
    if (!r.ok) throw new CallbackRefused(r.reason);
    address = r.address;
  }
  const tls = u.protocol === 'https:';
  const status = await new Promise<number>((resolve, reject) => {
    const req = (tls ? https : http).request(
      {
        host,
        port: u.port || (tls ? 443 : 80),
        path: `${u.pathname}${u.search}`,
        method: 'POST',
        headers: { ...headers, 'Content-Length': String(body.length) },
        ...(u.username || u.password ? { auth: `${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}` } : {}),
        lookup: pinnedLookup(address),
        ...(tls && !isIpLiteral(host) ? { servername: host } : {}),
        agent: false, // no pooled socket: each delivery connects to the address it vetted
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
        res.on('error', reject);
      },
    );
    const timer = setTimeout(() => req.destroy(new Error(`callback to ${u.host} timed out after ${opts.timeoutMs} ms`)), opts.timeoutMs);
    req.on('close', () => clearTimeout(timer));
    req.on('error', reject);
    req.end(body);
  });
  if (status >= 500) throw new Error(`callback to ${u.host} answered ${status}`);
  return status;
}
