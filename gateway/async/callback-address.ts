/**
 * Which IP addresses and host names a callback must never reach: link-local (where cloud metadata
 * services answer), cloud metadata addresses and names, and the unspecified address. Pure: a
 * string in, a reason (or undefined) out. Used twice: on the URL as written when a job is
 * submitted, and on every address its host resolves to when the callback is delivered.
 */

/** Cloud metadata services reachable by name (GCP; Azure and AWS use 169.254.169.254). */
const METADATA_NAMES = new Set(['metadata.google.internal', 'metadata.goog', 'metadata']);

/** Metadata addresses outside the link-local ranges: AWS's IPv6 IMDS, Alibaba Cloud's IPv4 one. */
const METADATA_V6 = [0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254]; // fd00:ec2::254
const METADATA_V4 = new Set(['100.100.100.200']);

const DOTTED = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;

/** Dotted-decimal IPv4 (what `new URL` and `dns.lookup` produce) as 4 bytes, or undefined. */
export function parseIpv4(s: string): number[] | undefined {
  const m = DOTTED.exec(s);
  if (!m) return undefined;
  const b = m.slice(1).map(Number);
  return b.every((n) => n <= 255) ? b : undefined;
}

/**
 * An IPv6 literal (no brackets; `::`, a dotted IPv4 tail and a `%zone` allowed) as 8 16-bit
 * groups, or undefined.
 */
export function parseIpv6(s: string): number[] | undefined {
  let text = s.replace(/%.*$/, '').toLowerCase();
  let v4: number[] = [];
  const tail = /(?:^|:)(\d{1,3}(?:\.\d{1,3}){3})$/.exec(text);
  if (tail) {
    const b = parseIpv4(tail[1]);
    if (!b) return undefined;
    v4 = [(b[0] << 8) | b[1], (b[2] << 8) | b[3]];
    text = text.slice(0, -tail[1].length); // ends with ':' (or '::'), or is '' when there was no ':'
    if (!text.endsWith(':')) return undefined;
    if (!text.endsWith('::')) text = text.slice(0, -1);
  }
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const groupsOf = (h: string) => (h === '' ? [] : h.split(':'));
  const head = groupsOf(halves[0]);
  const rest = halves.length === 2 ? groupsOf(halves[1]) : [];
  if (![...head, ...rest].every((g) => /^[0-9a-f]{1,4}$/.test(g))) return undefined;
  const want = 8 - v4.length;
  const n = head.length + rest.length;
  if (halves.length === 2 ? n >= want : n !== want) return undefined;
  const hex = (a: string[]) => a.map((g) => parseInt(g, 16));
  return [...hex(head), ...Array<number>(want - n).fill(0), ...hex(rest), ...v4];
}

const v4Text = (b: number[]) => b.join('.');
const bytesOf = (hi: number, lo: number) => [hi >> 8, hi & 0xff, lo >> 8, lo & 0xff];

/** Why an IPv4 address (4 bytes) is refused, or undefined. */
function ipv4Risk(b: number[], unspecified: boolean): string | undefined {
  if (b[0] === 169 && b[1] === 254) return 'link-local (169.254.0.0/16)';
  if (METADATA_V4.has(v4Text(b))) return 'a cloud metadata address';
  if (unspecified && b[0] === 0) return 'unspecified (0.0.0.0/8)';
  return undefined;
}

/**
 * The IPv4 addresses an IPv6 address carries, by form: IPv4-mapped `::ffff:0:0/96`, IPv4-translated
 * `::ffff:0:0:0/96`, IPv4-compatible `::/96`, NAT64 `64:ff9b::/96` and `64:ff9b:1::/48` (every
 * RFC 6052 position), 6to4 `2002::/16`, Teredo `2001::/32` (server and client).
 */
function embeddedIpv4(g: number[]): { form: string; v4: number[] }[] {
  const zero = (from: number, to: number) => g.slice(from, to).every((n) => n === 0);
  const last = bytesOf(g[6], g[7]);
  if (zero(0, 5) && g[5] === 0xffff) return [{ form: 'IPv4-mapped', v4: last }];
  if (zero(0, 4) && g[4] === 0xffff && g[5] === 0) return [{ form: 'IPv4-translated', v4: last }];
  if (zero(0, 6)) return [{ form: 'IPv4-compatible', v4: last }];
  if (g[0] === 0x64 && g[1] === 0xff9b && zero(2, 6)) return [{ form: 'NAT64 64:ff9b::/96', v4: last }];
  if (g[0] === 0x64 && g[1] === 0xff9b && g[2] === 1) {
    // RFC 6052: the IPv4 bits follow the prefix, skipping bits 64–71 (the "u" octet)
    const bytes = g.flatMap((n) => [n >> 8, n & 0xff]);
    const at = (prefixBytes: number) => bytes.slice(prefixBytes).filter((_, i) => prefixBytes + i !== 8).slice(0, 4);
    return [6, 7, 8, 12].map((p) => ({ form: `NAT64 64:ff9b:1::/${p * 8}`, v4: at(p) }));
  }
  if (g[0] === 0x2002) return [{ form: '6to4', v4: bytesOf(g[1], g[2]) }];
  if (g[0] === 0x2001 && g[1] === 0) {
    return [
      { form: 'Teredo server', v4: bytesOf(g[2], g[3]) },
      { form: 'Teredo client', v4: bytesOf(~g[6] & 0xffff, ~g[7] & 0xffff) },
    ];
  }
  return [];
}

/** Why an IPv6 address (8 groups) is refused, or undefined. */
function ipv6Risk(g: number[]): string | undefined {
  if (g.every((n) => n === 0)) return 'unspecified (::)';
  if (g.slice(0, 7).every((n) => n === 0) && g[7] === 1) return undefined; // ::1, loopback
  if ((g[0] & 0xffc0) === 0xfe80) return 'link-local (fe80::/10)';
  if (g.every((n, i) => n === METADATA_V6[i])) return 'a cloud metadata address';
  for (const { form, v4 } of embeddedIpv4(g)) {
    // 0.0.0.0 only counts where it is the address (mapped); elsewhere zero bits are routine
    const why = ipv4Risk(v4, form === 'IPv4-mapped');
    if (why) return `${why.replace(/ \(.*\)$/, '')} (${v4Text(v4)} embedded, ${form})`;
  }
  return undefined;
}

/**
 * Why the IP address `ip` (dotted IPv4, or IPv6 without brackets) must not receive a callback, or
 * undefined when it may (or `ip` is not an IP address).
 */
export function addressRisk(ip: string): string | undefined {
  const v4 = parseIpv4(ip);
  if (v4) return ipv4Risk(v4, true);
  const v6 = parseIpv6(ip);
  return v6 ? ipv6Risk(v6) : undefined;
}

/** Whether `host` (a URL's hostname, brackets stripped) is an IP literal. */
export function isIpLiteral(host: string): boolean {
  return parseIpv4(host) !== undefined || parseIpv6(host) !== undefined;
}

/**
 * Why the host name `name` (lower-case, no trailing dot) is refused as written, or undefined: a
 * metadata name, or a name spelling a refused IPv4 address for a wildcard DNS service
 * (`169.254.169.254.nip.io`, `x-169-254-169-254.sslip.io`, `a9fea9fe.nip.io`). Anything else is
 * judged by what it resolves to.
 */
export function nameRisk(name: string): string | undefined {
  if (METADATA_NAMES.has(name)) return 'a cloud metadata name';
  // a metadata name under another domain is a wildcard-DNS trick, not a callback receiver
  if ([...METADATA_NAMES].some((m) => m.includes('.') && name.startsWith(`${m}.`))) return 'a cloud metadata name under another domain';
  const labels = name.split('.');
  const spelled: number[][] = [];
  for (let i = 0; i + 4 <= labels.length; i++) {
    const b = parseIpv4(labels.slice(i, i + 4).join('.'));
    if (b) spelled.push(b);
  }
  for (const l of labels) {
    const dashed = /(?:^|-)(\d{1,3}-\d{1,3}-\d{1,3}-\d{1,3})$/.exec(l);
    const b = dashed && parseIpv4(dashed[1].replace(/-/g, '.'));
    if (b) spelled.push(b);
    if (/^[0-9a-f]{8}$/.test(l)) spelled.push(bytesOf(parseInt(l.slice(0, 4), 16), parseInt(l.slice(4), 16)));
  }
  for (const b of spelled) {
    const why = ipv4Risk(b, false);
    if (why) return `a name for ${v4Text(b)}, ${why}`;
  }
  return undefined;
}
