import { addressRisk, nameRisk, parseIpv6 } from '../../gateway/async/callback-address';
import { checkCallbackUrl, vetResolved } from '../../gateway/async/callback-policy';

describe('parseIpv6', () => {
  test.each([
    { ip: '::', want: [0, 0, 0, 0, 0, 0, 0, 0] },
    { ip: '::1', want: [0, 0, 0, 0, 0, 0, 0, 1] },
    { ip: 'FE80::1%eth0', want: [0xfe80, 0, 0, 0, 0, 0, 0, 1] },
    { ip: '1:2:3:4:5:6:7:8', want: [1, 2, 3, 4, 5, 6, 7, 8] },
    { ip: '1::8', want: [1, 0, 0, 0, 0, 0, 0, 8] },
    { ip: '::ffff:169.254.1.2', want: [0, 0, 0, 0, 0, 0xffff, 0xa9fe, 0x0102] },
    { ip: '::169.254.1.2', want: [0, 0, 0, 0, 0, 0, 0xa9fe, 0x0102] },
    { ip: '1:2:3:4:5:6:169.254.1.2', want: [1, 2, 3, 4, 5, 6, 0xa9fe, 0x0102] },
    { ip: '1::2::3', want: undefined },
    { ip: '1:2:3:4:5:6:7:8:9', want: undefined },
    { ip: '1:2:3:4:5:6:7', want: undefined },
    { ip: '1:2:3:4:5:6:7:8::', want: undefined },
    { ip: '::ffff:1.2.3', want: undefined },
    { ip: '::ffff:1.2.3.256', want: undefined },
    { ip: '12345::', want: undefined },
    { ip: 'g::1', want: undefined },
    { ip: '169.254.1.2', want: undefined },
    { ip: 'example.com', want: undefined },
  ])('$ip', ({ ip, want }) => expect(parseIpv6(ip)).toEqual(want));
});

describe('addressRisk', () => {
  test.each([
    // IPv4
    { ip: '169.254.169.254', why: /^link-local \(169\.254\.0\.0\/16\)$/ },
    { ip: '169.254.0.0', why: /link-local/ },
    { ip: '169.254.255.255', why: /link-local/ },
    { ip: '100.100.100.200', why: /cloud metadata/ }, // Alibaba Cloud
    { ip: '0.0.0.0', why: /unspecified/ },
    { ip: '0.1.2.3', why: /unspecified/ },
    { ip: '169.253.255.255', why: undefined },
    { ip: '169.255.0.0', why: undefined },
    { ip: '127.0.0.1', why: undefined },
    { ip: '10.0.0.1', why: undefined },
    { ip: '100.100.100.201', why: undefined },
    // IPv6 as such
    { ip: '::', why: /unspecified \(::\)/ },
    { ip: '::1', why: undefined },
    { ip: 'fe80::1', why: /link-local \(fe80::\/10\)/ },
    { ip: 'fe80::1%eth0', why: /link-local/ },
    { ip: 'febf:ffff::1', why: /link-local/ },
    { ip: 'fec0::1', why: undefined },
    { ip: 'fd00:ec2::254', why: /cloud metadata/ },
    { ip: 'fd00:ec2:0:0:0:0:0:254', why: /cloud metadata/ },
    { ip: 'fd00:ec2::253', why: undefined },
    { ip: '2001:db8::1', why: undefined },
    // IPv4-mapped ::ffff:0:0/96
    { ip: '::ffff:169.254.169.254', why: /link-local \(169\.254\.169\.254 embedded, IPv4-mapped\)/ },
    { ip: '::ffff:a9fe:a9fe', why: /IPv4-mapped/ },
    { ip: '::ffff:0.0.0.0', why: /unspecified .*IPv4-mapped/ },
    { ip: '::ffff:100.100.100.200', why: /cloud metadata .*IPv4-mapped/ },
    { ip: '::ffff:127.0.0.1', why: undefined },
    // IPv4-translated ::ffff:0:0:0/96
    { ip: '::ffff:0:a9fe:a9fe', why: /IPv4-translated/ },
    // IPv4-compatible ::/96 (deprecated, still routed by some stacks)
    { ip: '::a9fe:a9fe', why: /link-local \(169\.254\.169\.254 embedded, IPv4-compatible\)/ },
    { ip: '::169.254.169.254', why: /IPv4-compatible/ },
    { ip: '::7f00:1', why: undefined },
    // NAT64 well-known prefix 64:ff9b::/96
    { ip: '64:ff9b::a9fe:a9fe', why: /169\.254\.169\.254 embedded, NAT64 64:ff9b::\/96/ },
    { ip: '64:ff9b::169.254.1.1', why: /NAT64/ },
    { ip: '64:ff9b::808:808', why: undefined },
    { ip: '64:ff9b::1:a9fe:a9fe', why: undefined }, // not in the /96
    // NAT64 local-use prefix 64:ff9b:1::/48, every RFC 6052 position
    { ip: '64:ff9b:1::a9fe:a9fe', why: /NAT64 64:ff9b:1::\/96/ },
    { ip: '64:ff9b:1:a9fe:a9:fe00::', why: /NAT64 64:ff9b:1::\/48/ },
    { ip: '64:ff9b:1:a9:fe:a9fe::', why: /NAT64 64:ff9b:1::\/56/ },
    { ip: '64:ff9b:1:0:a9:fea9:fe00:0', why: /NAT64 64:ff9b:1::\/64/ },
    { ip: '64:ff9b:1::808:808', why: undefined },
    // 6to4 2002::/16
    { ip: '2002:a9fe:a9fe::1', why: /169\.254\.169\.254 embedded, 6to4/ },
    { ip: '2002:a9fe::', why: /6to4/ },
    { ip: '2002:808:808::1', why: undefined },
    // Teredo 2001::/32: server, and client (bits inverted)
    { ip: '2001:0:a9fe:a9fe::1', why: /Teredo server/ },
    { ip: '2001:0:4136:e378:8000:63bf:5601:5601', why: /169\.254\.169\.254 embedded, Teredo client/ },
    { ip: '2001:0:4136:e378:8000:63bf:3fff:fdd2', why: undefined },
    // not addresses
    { ip: 'example.com', why: undefined },
    { ip: '', why: undefined },
  ])('$ip', ({ ip, why }) => {
    const got = addressRisk(ip);
    if (why) expect(got).toMatch(why);
    else expect(got).toBeUndefined();
  });
});

describe('nameRisk', () => {
  test.each([
    { name: 'metadata.google.internal', why: /cloud metadata name/ },
    { name: 'metadata.goog', why: /cloud metadata name/ },
    { name: 'metadata', why: /cloud metadata name/ },
    { name: 'metadata.google.internal.nip.io', why: /cloud metadata name under another domain/ },
    { name: '169.254.169.254.nip.io', why: /a name for 169\.254\.169\.254, link-local/ },
    { name: 'app.169.254.169.254.sslip.io', why: /169\.254\.169\.254/ },
    { name: 'app-169-254-169-254.nip.io', why: /169\.254\.169\.254/ },
    { name: '169-254-169-254.sslip.io', why: /169\.254\.169\.254/ },
    { name: 'a9fea9fe.nip.io', why: /169\.254\.169\.254/ },
    { name: '100.100.100.200.nip.io', why: /cloud metadata/ },
    { name: 'metadata.example.com', why: undefined },
    { name: 'hooks.example.com', why: undefined },
    { name: '10.0.0.1.nip.io', why: undefined },
    { name: '0.0.0.0.nip.io', why: undefined }, // judged by what it resolves to
    { name: 'deadbeef.example.com', why: undefined },
  ])('$name', ({ name, why }) => {
    const got = nameRisk(name);
    if (why) expect(got).toMatch(why);
    else expect(got).toBeUndefined();
  });
});

describe('checkCallbackUrl: every spelling of a refused address, as the WHATWG parser leaves it', () => {
  test.each([
    // the reported ones
    { url: 'http://169.254.169.254.nip.io/', host: '169.254.169.254.nip.io', why: /link-local/ },
    { url: 'http://metadata.google.internal.nip.io/', host: 'metadata.google.internal.nip.io', why: /metadata/ },
    { url: 'http://[::a9fe:a9fe]/', host: '[::a9fe:a9fe]', why: /IPv4-compatible/ },
    { url: 'http://[64:ff9b::a9fe:a9fe]/', host: '[64:ff9b::a9fe:a9fe]', why: /NAT64/ },
    // IPv4 numbers: new URL normalises decimal, octal, hex and short forms to dotted decimal
    { url: 'http://2852039166/', host: '169.254.169.254', why: /link-local/ },
    { url: 'http://0xA9FEA9FE/', host: '169.254.169.254', why: /link-local/ },
    { url: 'http://0251.0376.0251.0376/', host: '169.254.169.254', why: /link-local/ },
    { url: 'http://0xa9.0xfe.0xa9.0xfe/', host: '169.254.169.254', why: /link-local/ },
    { url: 'http://169.254.43518/', host: '169.254.169.254', why: /link-local/ },
    { url: 'http://169.16689662/', host: '169.254.169.254', why: /link-local/ },
    { url: 'http://0251.0xfe.43518/', host: '169.254.169.254', why: /link-local/ },
    { url: 'http://169.254.169.254./', host: '169.254.169.254', why: /link-local/ },
    { url: 'http://0/', host: '0.0.0.0', why: /unspecified/ },
    { url: 'http://0x0/', host: '0.0.0.0', why: /unspecified/ },
    { url: 'http://0.0.0.0:8080/', host: '0.0.0.0', why: /unspecified/ },
    { url: 'http://100.100.100.200/', host: '100.100.100.200', why: /metadata/ },
    // IPv6: new URL rewrites a dotted tail to hex and compresses zeros
    { url: 'http://[::169.254.169.254]/', host: '[::a9fe:a9fe]', why: /IPv4-compatible/ },
    { url: 'http://[0:0:0:0:0:0:a9fe:a9fe]/', host: '[::a9fe:a9fe]', why: /IPv4-compatible/ },
    { url: 'http://[::ffff:169.254.169.254]/', host: '[::ffff:a9fe:a9fe]', why: /IPv4-mapped/ },
    { url: 'http://[::ffff:0.0.0.0]/', host: '[::ffff:0:0]', why: /unspecified/ },
    { url: 'http://[64:ff9b::169.254.169.254]/', host: '[64:ff9b::a9fe:a9fe]', why: /NAT64 64:ff9b::\/96/ },
    { url: 'http://[64:ff9b:1::a9fe:a9fe]/', host: '[64:ff9b:1::a9fe:a9fe]', why: /NAT64 64:ff9b:1::/ },
    { url: 'http://[64:ff9b:1:a9fe:a9:fe00::]/', host: '[64:ff9b:1:a9fe:a9:fe00::]', why: /NAT64 64:ff9b:1::\/48/ },
    { url: 'http://[2002:a9fe:a9fe::]/', host: '[2002:a9fe:a9fe::]', why: /6to4/ },
    { url: 'http://[::]/', host: '[::]', why: /unspecified/ },
    { url: 'http://[0::0]:80/', host: '[::]', why: /unspecified/ },
    { url: 'http://[FE80::A9FE:A9FE]/', host: '[fe80::a9fe:a9fe]', why: /fe80::\/10/ },
    { url: 'http://[fd00:ec2:0::254]/', host: '[fd00:ec2::254]', why: /metadata/ },
  ])('$url', ({ url, host, why }) => {
    expect(new URL(url).hostname.replace(/\.$/, '')).toBe(host);
    const v = checkCallbackUrl(url);
    expect(v.ok).toBe(false);
    if (!v.ok) {
      expect(v.reason).toContain(`host ${host} is `);
      expect(v.reason).toMatch(why);
    }
  });

  test.each(['http://[::1]:9/', 'http://[::ffff:7f00:1]/', 'http://[64:ff9b::808:808]/', 'http://[2002:808:808::]/', 'http://10.1.2.3/', 'http://0x7f000001/'])(
    '%s is accepted',
    (url) => expect(checkCallbackUrl(url).ok).toBe(true),
  );

  it('refuses literals and names as written even when the operator listed them', () => {
    expect(checkCallbackUrl('http://[::a9fe:a9fe]/', ['[::a9fe:a9fe]']).ok).toBe(false);
    expect(checkCallbackUrl('http://169.254.169.254.nip.io/', ['169.254.169.254.nip.io']).ok).toBe(false);
  });
});

describe('vetResolved', () => {
  const u = (s: string) => new URL(s);
  test.each([
    { name: 'one good address', url: 'http://good.test/', addrs: ['127.0.0.1'], allow: [], want: { ok: true, address: '127.0.0.1' } },
    { name: 'the first of several', url: 'http://good.test/', addrs: ['10.0.0.2', '::1'], allow: [], want: { ok: true, address: '10.0.0.2' } },
    { name: 'link-local', url: 'http://evil.test/', addrs: ['169.254.169.254'], allow: [],
      want: { ok: false, reason: 'host evil.test resolves to 169.254.169.254, link-local (169.254.0.0/16)' } },
    { name: 'any refused answer refuses', url: 'http://evil.test/', addrs: ['127.0.0.1', '169.254.169.254'], allow: [],
      want: { ok: false, reason: expect.stringContaining('169.254.169.254') } },
    { name: 'v6 link-local', url: 'http://evil.test/', addrs: ['::1', 'fe80::1'], allow: [],
      want: { ok: false, reason: expect.stringContaining('fe80::/10') } },
    { name: 'IMDSv6', url: 'http://evil.test/', addrs: ['fd00:ec2::254'], allow: [], want: { ok: false, reason: expect.stringContaining('metadata') } },
    { name: 'mapped, as getaddrinfo may answer', url: 'http://evil.test/', addrs: ['::ffff:169.254.169.254'], allow: [],
      want: { ok: false, reason: expect.stringContaining('IPv4-mapped') } },
    { name: 'NAT64 synthesis (DNS64)', url: 'http://evil.test/', addrs: ['64:ff9b::a9fe:a9fe'], allow: [],
      want: { ok: false, reason: expect.stringContaining('NAT64') } },
    { name: 'unspecified', url: 'http://evil.test/', addrs: ['0.0.0.0'], allow: [], want: { ok: false, reason: expect.stringContaining('unspecified') } },
    { name: 'trailing dot', url: 'http://evil.test./', addrs: ['169.254.1.1'], allow: [],
      want: { ok: false, reason: expect.stringContaining('host evil.test resolves') } },
    { name: 'a host the operator listed', url: 'http://agent.internal/', addrs: ['169.254.170.2'], allow: ['agent.internal'],
      want: { ok: true, address: '169.254.170.2' } },
    { name: 'listed with its port', url: 'http://agent.internal:51678/', addrs: ['169.254.170.2'], allow: ['agent.internal:51678'],
      want: { ok: true, address: '169.254.170.2' } },
    { name: 'listed on another port', url: 'http://agent.internal:80/', addrs: ['169.254.170.2'], allow: ['agent.internal:51678'],
      want: { ok: false, reason: expect.stringContaining('link-local') } },
  ])('$name', ({ url, addrs, allow, want }) => expect(vetResolved(u(url), addrs, allow)).toEqual(want));
});
