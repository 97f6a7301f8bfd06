/**
 * `MLFAAS_FUNCTION_EGRESS=internet` (issue 21): a sandboxed function reaches a public address
 * (an "internet" host in a network namespace of the test's own, at 198.51.100.2, TEST-NET-2)
 * and still nothing else: not the host (any of its addresses), not another replica, not link-local
 * metadata; nothing outside may open a connection to it. Invocations still go through the
 * gateway's socket. Needs root, nftables and iproute2 (`npm run setup` installs nftables).
 */
import { execFileSync, spawn, ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { egressUnavailable } from '../../node-runtime/egress';
import { sandboxUnavailable } from '../../node-runtime/sandbox';
import { eventually, testGateway, testRedis, TestPlatform } from '../helpers/platform';

const why = sandboxUnavailable() ?? egressUnavailable();
const describeIfAble = why ? describe.skip : describe;
const SH = { image: 'ghcr.io/openfaas/alpine:latest', envProcess: 'sh' };
const NS = `mlfaas-inet-${process.pid}`;
const HOST_IF = `tinet${process.pid % 100000}`;
const ip = (...a: string[]) => execFileSync('ip', a, { stdio: ['ignore', 'ignore', 'pipe'] });

/** A node one-liner: connects, prints what the peer says or `denied`. */
const connect = (host: string, port: number) =>
  `node -e "const s=require('net').connect(${port},'${host}');let d='';` +
  `s.on('data',(b)=>d+=b);s.on('end',()=>{console.log(d.trim()||'connected');process.exit()});` +
  `s.on('connect',()=>setTimeout(()=>{console.log(d.trim()||'connected');process.exit()},1000));` +
  `s.on('error',()=>{console.log('denied');process.exit()});setTimeout(()=>{console.log('denied');process.exit()},3000)"`;

describeIfAble('function egress to the internet (MLFAAS_FUNCTION_EGRESS=internet)', () => {
  let redis: Awaited<ReturnType<typeof testRedis>>;
  let p: TestPlatform;
  let server: ChildProcess;
  let forward = '0';
  const run = async (fn: string, script: string) => (await (await fetch(`${p.gw.url}/function/${fn}`, { method: 'POST', body: script })).text()).trim();
  const nsIpOf = async (fn: string) => (await run(fn, "ip -4 -o addr show eth0 | awk '{print $4}' | cut -d/ -f1"));

  beforeAll(async () => {
    forward = readFileSync('/proc/sys/net/ipv4/ip_forward', 'utf8').trim();
    ip('netns', 'add', NS);
    ip('link', 'add', HOST_IF, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', NS);
    ip('addr', 'add', '198.51.100.1/24', 'dev', HOST_IF);
    ip('link', 'set', HOST_IF, 'up');
    for (const a of [['addr', 'add', '198.51.100.2/24', 'dev', 'eth0'], ['link', 'set', 'eth0', 'up'], ['link', 'set', 'lo', 'up'],
      ['route', 'add', 'default', 'via', '198.51.100.1']]) ip('-n', NS, ...a);
    server = spawn('ip',
      ['netns', 'exec', NS, process.execPath, '-e',
        "require('net').createServer((s)=>s.end('internet says hi to '+s.remoteAddress+'\\n')).listen(80,'0.0.0.0',()=>console.log('up'))"],
      { stdio: ['ignore', 'pipe', 'inherit'] });
    await new Promise<void>((r) => server.stdout!.once('data', () => r()));
    redis = await testRedis();
    p = await testGateway(redis.url, { MLFAAS_HOST: '0.0.0.0', MLFAAS_FUNCTION_EGRESS: 'internet' });
    for (const service of ['a', 'b']) expect((await p.json('POST', '/system/functions', { service, ...SH })).status).toBe(202);
    expect(await eventually(async () => {
      const l = (await (await p.get('/system/functions')).json()) as Array<{ availableReplicas: number }>;
      return l.length === 2 && l.every((f) => f.availableReplicas >= 1);
    }, 60000, 200)).toBe(true);
  }, 90000);

  afterAll(async () => {
    await p?.stop();
    await redis?.stop();
    server?.kill('SIGKILL');
    try {
      ip('netns', 'del', NS);
    } catch {
      // gone
    }
    for (const t of [['inet', 'mlfaas'], ['ip', 'mlfaas_nat']]) {
      try {
        execFileSync('nft', ['delete', 'table', ...t], { stdio: 'ignore' });
      } catch {
        // gone
      }
    }
    writeFileSync('/proc/sys/net/ipv4/ip_forward', forward);
  });

  test('reaches a public address, masqueraded; invocations still work', async () => {
    expect(await run('a', 'echo ok')).toBe('ok');
    expect(await run('a', connect('198.51.100.2', 80))).toBe('internet says hi to 198.51.100.1');
    expect(await nsIpOf('a')).toMatch(/^10\.200\.\d+\.\d+$/);
  });

  test('reaches nothing on the host, no other replica, no metadata; nothing reaches it from outside', async () => {
    const gwPort = Number(new URL(p.gw.url).port);
    const ownHostSide = (await run('a', "ip -4 route | awk '/default/ {print $3}'"));
    expect(ownHostSide).toMatch(/^10\.200\.\d+\.\d+$/);
    for (const host of [ownHostSide, '198.51.100.1', '127.0.0.1']) {
      expect(await run('a', connect(host, gwPort))).toBe('denied');
    }
    expect(await run('a', connect('169.254.169.254', 80))).toBe('denied');
    const b = await nsIpOf('b');
    expect(await run('a', connect(b, 8080))).toBe('denied');
    // from the "internet", with a route to the replicas' network: no new connection gets in
    ip('-n', NS, 'route', 'add', '10.200.0.0/16', 'via', '198.51.100.1');
    const probe = execFileSync('ip', ['netns', 'exec', NS, process.execPath, '-e', connect(b, 8080).replace(/^node -e "|"$/g, '')], { encoding: 'utf8' })
      .trim();
    expect(probe).toBe('denied');
  });
});
