import { createServer as createTcpServer } from 'node:net';
import { AddressInfo } from 'node:net';
import { createServer as createTlsServer } from 'node:tls';
import { deliverCallback, ResolveAll } from '../../gateway/async/callback-delivery';
import { CallbackRefused } from '../../gateway/async/callback-refused';
import { callbackServer } from '../helpers/callback-server';

/** A resolver from a table (no DNS), counting the questions it was asked. */
function table(map: Record<string, string[]>): ResolveAll & { asked: string[] } {
  const asked: string[] = [];
  const resolve = async (host: string) => {
    asked.push(host);
    const addrs = map[host];
    if (!addrs) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return addrs.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  return Object.assign(resolve, { asked });
}

const body = Buffer.from('{"ok":true}');
const headers = { 'X-Function-Status': '200', 'Content-Type': 'application/json' };

describe('deliverCallback', () => {
  let good: Awaited<ReturnType<typeof callbackServer>>;
  let trap: Awaited<ReturnType<typeof callbackServer>>;
  beforeEach(async () => {
    good = await callbackServer();
    trap = await callbackServer(); // on 127.0.0.1 too: reachable, so only the policy keeps callbacks off it
  });
  afterEach(async () => {
    await good.close();
    await trap.close();
  });

  it('delivers to the address it checked, with the name in Host, resolving once (no rebinding)', async () => {
    // answers 127.0.0.1 once, then the metadata address: a second resolution would go there
    let n = 0;
    const asked: string[] = [];
    const rebinding: ResolveAll = async (host) => {
      asked.push(host);
      return [{ address: n++ === 0 ? '127.0.0.1' : '169.254.169.254', family: 4 }];
    };
    const status = await deliverCallback(`http://good.test:${good.port}/cb?x=1`, body, headers, { timeoutMs: 5000, allow: [], resolve: rebinding });
    expect(status).toBe(200);
    expect(asked).toEqual(['good.test']);
    expect(good.received).toHaveLength(1);
    expect(good.received[0].headers.host).toBe(`good.test:${good.port}`);
    expect(good.received[0].headers['x-function-status']).toBe('200');
    expect(good.received[0].body).toBe('{"ok":true}');
  });

  test.each([
    { name: 'link-local', addrs: ['169.254.169.254'], why: /evil\.test resolves to 169\.254\.169\.254, link-local/ },
    { name: 'link-local among good answers', addrs: ['127.0.0.1', '169.254.169.254'], why: /169\.254\.169\.254/ },
    { name: 'fe80::/10', addrs: ['127.0.0.1', 'fe80::1'], why: /fe80::\/10/ },
    { name: 'AWS IMDSv6', addrs: ['fd00:ec2::254'], why: /metadata/ },
    { name: 'IPv4-mapped link-local', addrs: ['::ffff:169.254.169.254'], why: /IPv4-mapped/ },
    { name: 'IPv4-compatible link-local', addrs: ['::a9fe:a9fe'], why: /IPv4-compatible/ },
    { name: 'NAT64 link-local', addrs: ['64:ff9b::a9fe:a9fe'], why: /NAT64/ },
    { name: '6to4 link-local', addrs: ['2002:a9fe:a9fe::1'], why: /6to4/ },
    { name: 'unspecified', addrs: ['0.0.0.0'], why: /unspecified/ },
  ])('refuses a host resolving to $name without connecting anywhere', async ({ addrs, why }) => {
    const resolve = table({ 'evil.test': addrs });
    const p = deliverCallback(`http://evil.test:${trap.port}/cb`, body, headers, { timeoutMs: 5000, allow: [], resolve });
    await expect(p).rejects.toBeInstanceOf(CallbackRefused);
    await expect(p).rejects.toThrow(why);
    expect(trap.connections()).toBe(0);
  });

  it('refuses a literal queued under another policy without resolving or connecting', async () => {
    const resolve = table({});
    await expect(deliverCallback('http://[::a9fe:a9fe]/', body, headers,
      { timeoutMs: 5000, allow: [], resolve })).rejects.toThrow(/callback refused: host \[::a9fe:a9fe\] is link-local/);
    await expect(deliverCallback(`http://127.0.0.1:${trap.port}/`, body, headers,
      { timeoutMs: 5000, allow: ['hooks.example.com'], resolve })).rejects.toThrow(/not in MLFAAS_CALLBACK_ALLOW/);
    expect(resolve.asked).toEqual([]);
    expect(trap.connections()).toBe(0);
  });

  it('lets a host the operator listed resolve to link-local, and connects to the first address', async () => {
    const resolve = table({ 'agent.test': ['127.0.0.1', '169.254.170.2'] });
    expect(await deliverCallback(`http://agent.test:${good.port}/cb`, body, headers, { timeoutMs: 5000, allow: ['agent.test'], resolve })).toBe(200);
    expect(good.received).toHaveLength(1);
  });

  it('fails (to be retried) on what may pass: an unknown name, a 5xx, a timeout', async () => {
    const resolve = table({ 'good.test': ['127.0.0.1'] });
    const unknown = deliverCallback('http://nowhere.test/', body, headers, { timeoutMs: 5000, allow: [], resolve });
    await expect(unknown).rejects.toThrow(/ENOTFOUND/);
    await expect(unknown).rejects.not.toBeInstanceOf(CallbackRefused);
    const failing = await callbackServer(503);
    try {
      const five = deliverCallback(`http://good.test:${failing.port}/`, body, headers, { timeoutMs: 5000, allow: [], resolve });
      await expect(five).rejects.toThrow(/answered 503/);
      await expect(five).rejects.not.toBeInstanceOf(CallbackRefused);
    } finally {
      await failing.close();
    }
    const silent = createTcpServer(() => undefined); // accepts, never answers
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', () => r()));
    try {
      const { port } = silent.address() as AddressInfo;
      await expect(deliverCallback(`http://good.test:${port}/`, body, headers,
        { timeoutMs: 300, allow: [], resolve })).rejects.toThrow(/timed out after 300 ms/);
    } finally {
      silent.close();
    }
  });

  it('https: connects to the vetted address with the host name in TLS SNI', async () => {
    const sni: string[] = [];
    // records the ClientHello's server name, then ends the handshake (no certificate to offer)
    const tls = createTlsServer({ SNICallback: (name, cb) => (sni.push(name), cb(new Error('no certificate here'), undefined)) });
    await new Promise<void>((r) => tls.listen(0, '127.0.0.1', () => r()));
    try {
      const { port } = tls.address() as AddressInfo;
      const resolve = table({ 'good.test': ['127.0.0.1'], 'evil.test': ['169.254.169.254'] });
      const p = deliverCallback(`https://good.test:${port}/cb`, body, headers, { timeoutMs: 5000, allow: [], resolve });
      await expect(p).rejects.not.toBeInstanceOf(CallbackRefused);
      expect(sni).toEqual(['good.test']);
      await expect(deliverCallback(`https://evil.test:${port}/cb`, body, headers,
        { timeoutMs: 5000, allow: [], resolve })).rejects.toBeInstanceOf(CallbackRefused);
      expect(sni).toEqual(['good.test']);
    } finally {
      tls.close();
    }
  });
});
