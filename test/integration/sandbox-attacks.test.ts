/**
 * Issue 21's attacks, each run from inside a real sandboxed function (the built-in classic
 * watchdog image with fprocess `sh`: the request body is the attacker's shell script), each
 * shown failing, while invocations keep working: the network (other replicas, the gateway,
 * Redis, link-local metadata), code as root through the function's env, the host's files (an
 * operator's log with the admin password), the operator's environment, default limits
 * (processes, memory, tmpfs), other processes in /proc, and processes that outlive their
 * function or their agent.
 */
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from '../../gateway/config';
import { sandboxUnavailable } from '../../node-runtime/sandbox';
import { gatewayProcess } from '../helpers/gateway-process';
import { eventually, testGateway, testRedis, TestPlatform } from '../helpers/platform';

const why = sandboxUnavailable();
const describeIfRoot = why ? describe.skip : describe;
const SH = { image: 'ghcr.io/openfaas/alpine:latest', envProcess: 'sh' };
const NS = 'openfaas-fn';

/** Processes on the host running as `uid`. */
function processesOf(uid: number): number[] {
  const out: number[] = [];
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try {
      if (statSync(`/proc/${e}`).uid === uid) out.push(Number(e));
    } catch {
      // gone
    }
  }
  return out;
}

/** Threads of these processes, all together. */
function tasksOf(pids: number[]): number {
  let n = 0;
  for (const pid of pids) {
    try {
      n += readdirSync(`/proc/${pid}/task`).length;
    } catch {
      // gone
    }
  }
  return n;
}

/** A node one-liner that connects to host:port and prints `connected` or `denied`. */
const connect = (host: string, port: number) =>
  `node -e "const s=require('net').connect(${port},'${host}');` +
  `s.on('connect',()=>{console.log('connected');process.exit()});s.on('error',()=>{console.log('denied');process.exit()});` +
  `setTimeout(()=>{console.log('denied');process.exit()},3000)"`;

describeIfRoot('attacks from inside a sandboxed function', () => {
  let redis: Awaited<ReturnType<typeof testRedis>>;
  let p: TestPlatform;
  let listener: Server;
  let hostPort = 0;
  const plantedLog = join(REPO_ROOT, `.attack-test-${process.pid}.log`);
  const run = async (fn: string, script: string) => {
    const res = await fetch(`${p.gw.url}/function/${fn}`, { method: 'POST', body: script });
    return (await res.text()).trim();
  };
  const deploy = async (body: Record<string, unknown>) => {
    const res = await p.json('POST', '/system/functions', { ...SH, ...body });
    expect(res.status).toBe(202);
  };
  const ready = (names: string[]) =>
    eventually(async () => {
      const l = (await (await p.get('/system/functions')).json()) as Array<{ name: string; availableReplicas: number }>;
      return names.every((n) => l.some((f) => f.name === n && f.availableReplicas >= 1));
    }, 60000, 200);

  beforeAll(async () => {
    process.env.AWS_SECRET_ACCESS_KEY = 'operator-secret-123';
    writeFileSync(plantedLog, 'admin password: hunter2\n', { mode: 0o644 });
    listener = createServer((s) => s.end('host service\n'));
    await new Promise<void>((r) => listener.listen(0, '0.0.0.0', () => r()));
    hostPort = (listener.address() as { port: number }).port;
    redis = await testRedis(0);
    p = await testGateway(redis.url, { MLFAAS_HOST: '0.0.0.0', MLFAAS_DEFAULT_LIMITS: 'memory=256Mi,pids=128,tmp=16Mi' });
    expect((await p.json('POST', '/system/secrets', { name: 'b-secret', value: 'b-value' })).status).toBe(201);
    await deploy({ service: 'a' });
    await deploy({ service: 'b', secrets: ['b-secret'], envVars: { SECRET_ENV_B: 'b-env' } });
    expect(await ready(['a', 'b'])).toBe(true);
  }, 90000);

  afterAll(async () => {
    delete process.env.AWS_SECRET_ACCESS_KEY;
    rmSync(plantedLog, { force: true });
    await p?.stop();
    await redis?.stop();
    await new Promise((r) => listener?.close(r));
  });

  test("item 1: another function's replica, the gateway, Redis, host services and metadata are unreachable; invocations work", async () => {
    expect(await run('a', 'echo ok')).toBe('ok');
    const gwPort = Number(new URL(p.gw.url).port);
    for (const port of [gwPort, hostPort]) {
      expect(await run('a', connect('127.0.0.1', port))).toBe('denied');
    }
    expect(await run('a', connect('169.254.169.254', 80))).toBe('denied');
    // B's replica: its port is in B's own network namespace; its socket is in the host's data dir
    const [ep] = await p.gw.provider.endpoints({ name: 'b', namespace: NS });
    expect(ep.socket).toBeDefined();
    expect(await run('a', `test -e ${ep.socket} && echo LEAK || echo denied`)).toBe('denied');
    // 127.0.0.1:8080 in A is A's own watchdog (each replica has its own loopback), never B
    expect(await run('a', connect('127.0.0.1', 8080))).toBe('connected');
    expect(await run('a', `ls ${redis.dir} >/dev/null 2>&1 && echo LEAK || echo denied`)).toBe('denied');
    expect(await run('a', 'echo $SECRET_ENV_B; cat /var/openfaas/secrets/* 2>/dev/null; echo end')).toBe('end');
    // only loopback exists
    expect(await run('a', 'ls /sys/class/net 2>/dev/null || cat /proc/net/dev | tail -n +3 | cut -d: -f1 | tr -d " "')).toBe('lo');
  });

  test('item 2: PATH and loader variables from the function env never run anything as root', async () => {
    const evil = mkdtempSync(join(tmpdir(), 'mlfaas-evil-'));
    chmodSync(evil, 0o755);
    for (const cmd of ['mount', 'unshare', 'setpriv', 'sh', 'node', 'id', 'cat', 'echo', 'env']) {
      writeFileSync(join(evil, cmd), `#!/bin/sh\ntouch ${evil}/ran-as-$(/usr/bin/id -u)\nexec /usr/bin/${cmd} "$@"\n`, { mode: 0o755 });
    }
    try {
      await deploy({ service: 'pathy', envVars: { PATH: `${evil}:/usr/bin:/bin` } });
      expect(await ready(['pathy'])).toBe(true);
      expect(await run('pathy', 'echo $PATH')).toBe(`${evil}:/usr/bin:/bin`);
      expect(await run('pathy', 'echo ok')).toBe('ok');
      expect(existsSync(join(evil, 'ran-as-0'))).toBe(false);
      for (const k of ['LD_LIBRARY_PATH', 'LD_AUDIT', 'LD_PRELOAD']) {
        const res = await p.json('PUT', '/system/functions', { service: 'pathy', ...SH, envVars: { [k]: `${evil}/x.so` } });
        expect(res.status).toBe(400);
      }
    } finally {
      rmSync(evil, { recursive: true, force: true });
    }
  }, 90000);

  test("item 3: the host's files outside the system paths are invisible (an operator's log, the data dir, the repository)", async () => {
    expect(await run('a', `cat ${plantedLog} 2>/dev/null || echo denied`)).toBe('denied');
    expect(await run('a', `cat /var/openfaas/platform/${plantedLog.split('/').pop()} 2>/dev/null || echo denied`)).toBe('denied');
    expect(await run('a', `ls ${p.dataDir} 2>/dev/null || echo denied`)).toBe('denied');
    expect(await run('a', 'ls /root /home /work /run 2>/dev/null | wc -l')).toBe('0');
    expect(await run('a', 'ls /var/openfaas/platform')).toBe('gateway\nnative\nnode_modules');
  });

  test("item 4: the operator's environment does not reach functions", async () => {
    const env = await run('a', 'env');
    expect(env).not.toMatch(/AWS_SECRET_ACCESS_KEY|operator-secret-123/);
    expect(env).not.toMatch(/^MLFAAS_(AUTH|REDIS)/m);
    expect(env).toMatch(/^PATH=\/usr\/local\/sbin:/m);
  });

  test('item 5: processes, memory and tmpfs are bounded by default; /tmp is private; other processes are invisible', async () => {
    const uid = Number(await run('a', 'id -u'));
    // 200 background processes asked for (the shell gives up with "Cannot fork" at the limit)
    await run('a', 'for i in $(seq 1 200); do sleep 8 </dev/null >/dev/null 2>&1 & done 2>/dev/null; echo spawned');
    expect(processesOf(uid).length).toBeGreaterThan(20);
    // the replica's pids cgroup (it counts threads too) holds the line
    const [ep] = await p.gw.provider.endpoints({ name: 'a', namespace: NS });
    const group = ['/sys/fs/cgroup/pids/mlfaas', '/sys/fs/cgroup/mlfaas'].map((d) => join(d, ep.id)).find((d) => existsSync(join(d, 'pids.max')));
    expect(group).toBeDefined();
    expect(readFileSync(join(group!, 'pids.max'), 'utf8').trim()).toBe('128');
    expect(Number(readFileSync(join(group!, 'pids.current'), 'utf8'))).toBeLessThanOrEqual(128);
    expect(tasksOf(processesOf(uid))).toBeGreaterThan(100);
    // once the sleeps end, processes can be started again
    expect(await eventually(async () => (await run('a', '/bin/echo back')) === 'back', 30000, 500)).toBe(true);
    // 300 MB asked of each private tmpfs; each holds 16 MiB at most
    for (const dir of ['/tmp', '/var/tmp', '/dev/shm', '$HOME']) {
      expect(await run('a', `dd if=/dev/zero of=${dir}/fill bs=1M count=300 2>/dev/null; du -m ${dir}/fill | cut -f1; rm -f ${dir}/fill`)).toMatch(/^1[0-6]$/);
    }
    await run('a', 'echo from-a > /tmp/shared');
    expect(await run('b', 'cat /tmp/shared 2>/dev/null || echo private')).toBe('private');
    const pids = (await run('a', 'ls /proc | grep -E "^[0-9]+$" | wc -l')).trim();
    expect(Number(pids)).toBeLessThan(10);
    expect(await run('a', `test -e /proc/${process.pid} && cat /proc/${process.pid}/cmdline | tr '\\0' ' ' | grep -q jest && echo LEAK || echo denied`))
      .toBe('denied');
    // memory: 400 MB in a 256 MiB group kills the allocation, not the host
    const mem = await run('a', `node -e "const a=[];for(let i=0;i<400;i++)a.push(Buffer.alloc(1<<20,1));console.log('LEAK')" 2>/dev/null || echo killed`);
    expect(mem).toBe('killed');
    expect(await run('a', 'echo still-up')).toBe('still-up');
  }, 90000);

  test('item 8: every process of a function dies with its deletion, daemonised or not', async () => {
    await deploy({ service: 'daemon' });
    expect(await ready(['daemon'])).toBe(true);
    const uid = Number(await run('daemon', 'id -u'));
    await run('daemon', 'setsid sleep 1000 </dev/null >/dev/null 2>&1 & echo started');
    expect(await eventually(() => processesOf(uid).length >= 2, 10000)).toBe(true);
    expect((await p.json('DELETE', '/system/functions', { functionName: 'daemon' })).status).toBe(202);
    expect(await eventually(() => processesOf(uid).length === 0, 20000, 200)).toBe(true);
  }, 90000);
});

describeIfRoot('item 8: a SIGKILLed agent takes all its functions\' processes with it', () => {
  test('a setsid child of a function dies when the gateway process is killed -9', async () => {
    const redis = await testRedis();
    const dataDir = mkdtempSync(join(tmpdir(), 'mlfaas-data-'));
    const gw = await gatewayProcess({ MLFAAS_DATA_DIR: dataDir, MLFAAS_REDIS_URL: redis.url });
    try {
      const res = await fetch(`${gw.url}/system/functions`,
        { method: 'POST', body: JSON.stringify({ service: 'orphan', ...SH }), headers: { 'content-type': 'application/json' } });
      expect(res.status).toBe(202);
      const call = async (body: string) => (await (await fetch(`${gw.url}/function/orphan`, { method: 'POST', body })).text()).trim();
      expect(await eventually(async () => (await call('echo ok').catch(() => '')) === 'ok', 60000, 200)).toBe(true);
      const uid = Number(await call('id -u'));
      await call('setsid sleep 1000 </dev/null >/dev/null 2>&1 & echo started');
      expect(await eventually(() => processesOf(uid).length >= 2, 10000)).toBe(true);
      gw.child.kill('SIGKILL');
      expect(await eventually(() => processesOf(uid).length === 0, 20000, 200)).toBe(true);
    } finally {
      gw.child.kill('SIGKILL');
      await redis.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 120000);
});
