/**
 * The native sandbox (`native/build/mlfaas-sandbox`) run directly, as the agent runs it: the
 * relay from the host's unix socket to the function's port inside its network namespace carries
 * large bodies and concurrent connections, passes a half-close on, does not spin when a caller
 * hangs up before the answer, and the whole namespace dies with the outer process.
 */
import { ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { request } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SANDBOX_BIN, sandboxUnavailable, SYSTEM_PATHS } from '../../node-runtime/sandbox';
import { eventually } from '../helpers/platform';

const why = sandboxUnavailable();
const describeIfRoot = why ? describe.skip : describe;
const UID = 299_999;

/**
 * A server inside (raw HTTP over net, half-open allowed, so that a half-closed request is
 * answered, not aborted as node's http server may): answers the body's length, `/slow` after 3 s.
 */
const SERVER = `require('net').createServer({ allowHalfOpen: true }, (s) => {
  let buf = Buffer.alloc(0), done = false;
  s.on('data', (d) => {
    buf = Buffer.concat([buf, d]);
    const h = buf.indexOf('\\r\\n\\r\\n');
    if (done || h < 0) return;
    const head = buf.subarray(0, h).toString();
    const len = Number(/content-length: *(\\d+)/i.exec(head)?.[1] ?? 0);
    if (buf.length - h - 4 < len) return;
    done = true;
    const body = String(len);
    setTimeout(() => s.end('HTTP/1.1 200 OK\\r\\nContent-Length: ' + body.length + '\\r\\nConnection: close\\r\\n\\r\\n' + body), / \\/slow ` +
  `/.test(head) ? 3000 : 0);
  });
  s.on('error', () => undefined);
}).listen(8080, '127.0.0.1', () => console.log('up'));`;

/** CPU time (user + system, clock ticks) of a process. */
function cpuTicks(pid: number): number {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return Number(f[11]) + Number(f[12]);
}

function post(socketPath: string, path: string, body: Buffer): Promise<string> {
  return new Promise((resolve, reject) => {
    const r = request({ socketPath, path, method: 'POST', headers: { 'content-length': body.length } }, (res) => {
      let s = '';
      res.on('data', (d) => (s += d));
      res.on('end', () => resolve(s));
    });
    r.on('error', reject);
    r.end(body);
  });
}

describeIfRoot('mlfaas-sandbox relay', () => {
  let dir: string;
  let sock: string;
  let child: ChildProcess;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'mlfaas-relay-'));
    sock = join(dir, 'gateway.sock');
    const args = ['--uid', String(UID), '--gid', String(UID), ...SYSTEM_PATHS.flatMap((p) => ['--system', p]), '--tmpfs', '/tmp', String(16 << 20), '1777', '0',
      '--listen', sock, '--target-port', '8080', '--chdir', '/', '--', process.execPath, '-e', SERVER];
    child = spawn(SANDBOX_BIN, args, { env: { PATH: '/usr/bin:/bin' }, stdio: ['ignore', 'pipe', 'inherit'] });
    await new Promise<void>((r) => child.stdout!.once('data', () => r()));
  });
  afterAll(() => {
    child?.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  test('the socket is root\'s alone; 5 MB bodies and 50 concurrent connections get through', async () => {
    expect(readFileSync('/proc/self/status', 'utf8')).toMatch(/Uid:\s+0\s/);
    expect(statSync(sock).mode & 0o077).toBe(0); // no group, no other
    expect(await post(sock, '/', Buffer.alloc(5_000_000, 7))).toBe('5000000');
    const all = await Promise.all(Array.from({ length: 50 }, (_, i) => post(sock, '/', Buffer.alloc(i * 1000, 1))));
    expect(all).toEqual(Array.from({ length: 50 }, (_, i) => String(i * 1000)));
  });

  test('a half-closed request still gets its answer', async () => {
    const answer = await new Promise<string>((resolve, reject) => {
      const s = connect(sock);
      let got = '';
      s.on('data', (d) => (got += d));
      s.on('end', () => resolve(got));
      s.on('error', reject);
      s.end('POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nConnection: close\r\n\r\nabc');
    });
    expect(answer).toMatch(/^HTTP\/1\.1 200[\s\S]*\r\n\r\n3$/);
  });

  test('a caller that hangs up before the answer costs the relay no CPU while the function works', async () => {
    const init = Number(readFileSync(`/proc/${child.pid}/task/${child.pid}/children`, 'utf8').trim().split(' ')[0]);
    for (let i = 0; i < 5; i++) {
      const s = connect(sock);
      s.write('POST /slow HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n\r\nx');
      setTimeout(() => s.destroy(), 100);
    }
    await new Promise((r) => setTimeout(r, 300));
    const before = cpuTicks(init);
    await new Promise((r) => setTimeout(r, 1500));
    expect(cpuTicks(init) - before).toBeLessThan(20); // a spinning loop would take ~150 ticks
    expect(await post(sock, '/', Buffer.from('ok'))).toBe('2'); // and it still relays
  });

  test('the namespace dies with the outer process, the socket stops answering', async () => {
    const init = Number(readFileSync(`/proc/${child.pid}/task/${child.pid}/children`, 'utf8').trim().split(' ')[0]);
    child.kill('SIGKILL');
    // gone, or a zombie waiting for the host's init to reap it
    const dead = () => !existsSync(`/proc/${init}`) || readFileSync(`/proc/${init}/stat`, 'utf8').split(') ')[1].startsWith('Z');
    expect(await eventually(dead, 10000)).toBe(true);
    await expect(post(sock, '/', Buffer.from('x'))).rejects.toThrow(/ECONNREFUSED/);
  });
});
