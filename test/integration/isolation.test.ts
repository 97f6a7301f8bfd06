/**
 * A function is an attacker: with fprocess `sh` (the built-in classic watchdog image runs the
 * request body as a shell script), it tries what was reproduced against the platform — read the
 * gateway's environment, Redis's password and socket, the data dir, another function's secret,
 * /etc/shadow, write its own image, opt out of its quota through its env. Each must fail, while
 * its own secret stays readable at the OpenFaaS path and it sits in a cgroup of its own.
 */
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, utimesSync, writeFileSync } from 'node:fs';
import { Cgroups } from '../../node-runtime/cgroups';
import { join } from 'node:path';
import { FUNCTION_UID_BASE } from '../../node-runtime/function-users';
import { sandboxUnavailable } from '../../node-runtime/sandbox';
import { eventually, testGateway, testRedis, TestPlatform } from '../helpers/platform';

const why = sandboxUnavailable();
// CI runs as root on Linux; elsewhere the platform says isolation is unavailable (asserted below)
const describeIfRoot = why ? describe.skip : describe;

const SH = { image: 'ghcr.io/openfaas/alpine:latest', envProcess: 'sh' };

describeIfRoot('function isolation (root host)', () => {
  let redis: Awaited<ReturnType<typeof testRedis>>;
  let p: TestPlatform;
  const run = async (fn: string, script: string) => {
    const res = await fetch(`${p.gw.url}/function/${fn}`, { method: 'POST', body: script });
    return (await res.text()).trim();
  };

  beforeAll(async () => {
    redis = await testRedis();
    p = await testGateway(redis.url, { MLFAAS_AUTH_PASSWORD: 'topsecret', MLFAAS_BASIC_AUTH: 'true' });
    const auth = { authorization: 'Basic ' + Buffer.from('admin:topsecret').toString('base64') };
    for (const [name, value] of [['mine', 'my-value'], ['theirs', 'their-value']]) {
      expect((await p.json('POST', '/system/secrets', { name, value }, auth)).status).toBe(201);
    }
    expect((await p.json('POST', '/system/functions', { service: 'attacker', ...SH, secrets: ['mine'] }, auth)).status).toBe(202);
    expect((await p.json('POST', '/system/functions', { service: 'victim', ...SH, secrets: ['theirs'], envVars: { VICTIM_TOKEN: 'v-123' } }, auth)).status)
      .toBe(202);
    const up = await eventually(async () => {
      const l = (await (await p.get('/system/functions', { headers: auth })).json()) as Array<{ availableReplicas: number }>;
      return l.length === 2 && l.every((f) => f.availableReplicas === 1);
    }, 30000);
    expect(up).toBe(true);
  }, 60000);

  afterAll(async () => {
    await p?.stop();
    await redis?.stop();
  });

  test('runs as an unprivileged uid of its own, different from every other function', async () => {
    const a = Number(await run('attacker', 'id -u'));
    const v = Number(await run('victim', 'id -u'));
    expect(a).toBeGreaterThanOrEqual(FUNCTION_UID_BASE);
    expect(v).toBeGreaterThanOrEqual(FUNCTION_UID_BASE);
    expect(a).not.toBe(v);
    expect(await run('attacker', 'cat /proc/self/status | grep ^CapEff')).toMatch(/CapEff:\s+0+$/);
    expect(await run('attacker', 'grep NoNewPrivs /proc/self/status')).toMatch(/1$/);
  });

  test("cannot read the gateway's environment, /etc/shadow, the data dir or Redis", async () => {
    expect(await run('attacker', `cat /proc/${process.pid}/environ >/dev/null 2>&1 && echo LEAK || echo denied`)).toBe('denied');
    expect(await run('attacker', 'cat /etc/shadow >/dev/null 2>&1 && echo LEAK || echo denied')).toBe('denied');
    expect(await run('attacker', `ls ${p.dataDir} >/dev/null 2>&1 && echo LEAK || echo denied`)).toBe('denied');
    expect(await run('attacker', `cat ${join(redis.dir, 'redis', 'redis.pass')} >/dev/null 2>&1 && echo LEAK || echo denied`)).toBe('denied');
    // the socket itself: 0700 in a 0700 dir; connecting needs to reach it first
    expect(await run('attacker', `test -r ${redis.socketPath} -o -w ${redis.socketPath} && echo LEAK || echo denied`)).toBe('denied');
  });

  test("reads its own secret at /var/openfaas/secrets and nothing of another function's", async () => {
    expect(await run('attacker', 'cat /var/openfaas/secrets/mine')).toBe('my-value');
    expect(await run('attacker', 'ls /var/openfaas/secrets')).toBe('mine');
    expect(await run('attacker', 'cat /var/openfaas/secrets/theirs >/dev/null 2>&1 && echo LEAK || echo denied')).toBe('denied');
    const hostDir = join(p.dataDir, 'secrets', 'openfaas-fn', 'victim', 'theirs');
    expect(existsSync(hostDir)).toBe(true);
    expect(await run('attacker', `cat ${hostDir} >/dev/null 2>&1 && echo LEAK || echo denied`)).toBe('denied');
    const victimPid = (await p.gw.provider.endpoints({ name: 'victim', namespace: 'openfaas-fn' }))[0].pid;
    expect(await run('attacker', `cat /proc/${victimPid}/environ 2>/dev/null | tr '\\0' '\\n' | grep VICTIM_TOKEN || echo denied`)).toBe('denied');
  });

  test('its image and the platform are read-only; its run dir is private and writable', async () => {
    expect(await run('attacker', 'touch /var/openfaas/platform/x 2>/dev/null && echo LEAK || echo denied')).toBe('denied');
    expect(await run('attacker', 'echo hi > $HOME/f && cat $HOME/f')).toBe('hi');
  });

  test('sits in a cgroup of its own replica', async () => {
    const [ep] = await p.gw.provider.endpoints({ name: 'attacker', namespace: 'openfaas-fn' });
    const cg = await run('attacker', 'cat /proc/self/cgroup');
    expect(cg).toContain(`/mlfaas/${ep.id}`);
  });

  test('cannot set the platform\'s variables (the tokend socket, the limiter) through its env', async () => {
    const auth = { authorization: 'Basic ' + Buffer.from('admin:topsecret').toString('base64') };
    for (const k of ['MLFAAS_TOKEND_SOCKET', 'LD_PRELOAD', 'TL_FAIL']) {
      const res = await p.json('PUT', '/system/functions', { service: 'attacker', ...SH, envVars: { [k]: '/tmp/x' } }, auth);
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: { field: string } }).error.field).toBe(`envVars.${k}`);
    }
  });

  test('secret files go when the secret goes, and when the function goes', async () => {
    const auth = { authorization: 'Basic ' + Buffer.from('admin:topsecret').toString('base64') };
    expect((await p.json('DELETE', '/system/secrets', { name: 'mine' }, auth)).status).toBe(200);
    expect(await eventually(async () => (await run('attacker', 'ls /var/openfaas/secrets')) === '', 15000, 200)).toBe(true);
    expect((await p.json('DELETE', '/system/functions', { functionName: 'victim' }, auth)).status).toBe(202);
    const dir = join(p.dataDir, 'secrets', 'openfaas-fn', 'victim');
    expect(await eventually(() => !existsSync(dir), 15000)).toBe(true);
    expect(readdirSync(join(p.dataDir, 'secrets', 'openfaas-fn'))).not.toContain('victim');
  });

  test('/system/info says how functions are isolated', async () => {
    const auth = { authorization: 'Basic ' + Buffer.from('admin:topsecret').toString('base64') };
    const info = (await (await p.get('/system/info', { headers: auth })).json()) as { mlfaas: { isolation: string } };
    expect(info.mlfaas.isolation).toMatch(/per-function uid/);
  });
});

describe('isolation off', () => {
  test('MLFAAS_ISOLATION=off is reported, never silent', async () => {
    const redis = await testRedis();
    const p = await testGateway(redis.url, { MLFAAS_ISOLATION: 'off' });
    try {
      const info = (await (await p.get('/system/info')).json()) as { mlfaas: { isolation: string } };
      expect(info.mlfaas.isolation).toMatch(/^off/);
      expect(p.gw.notices.join('\n')).toMatch(/function isolation: off/);
    } finally {
      await p.stop();
      await redis.stop();
    }
  });
});

describe('cgroups', () => {
  const cg = Cgroups.detect();
  (cg ? test : test.skip)('a group left empty by a dead agent is pruned at the next start; a busy one is kept', async () => {
    const root = cg!.version === 1 ? '/sys/fs/cgroup/cpu/mlfaas' : '/sys/fs/cgroup/mlfaas';
    const procs = cg!.create('leftover-test', {});
    const busy = cg!.create('busy-test', {});
    const sleeper = spawn('sleep', ['30'], { stdio: 'ignore' });
    try {
      writeFileSync(busy[0], String(sleeper.pid));
      expect(existsSync(join(root, 'leftover-test'))).toBe(true);
      expect(procs.length).toBeGreaterThan(0);
      Cgroups.detect();
      expect(existsSync(join(root, 'leftover-test'))).toBe(true); // just made: maybe a live agent's
      const old = new Date(Date.now() - 120_000);
      // every hierarchy the platform uses (v1: cpu, cpuset, cpuacct, memory) holds the group
      const roots = cg!.version === 1 ? ['cpu', 'cpuset', 'cpuacct', 'memory', 'pids'].map((h) => `/sys/fs/cgroup/${h}/mlfaas`).filter(existsSync) : [root];
      for (const r of roots) for (const n of ['leftover-test', 'busy-test']) if (existsSync(join(r, n))) utimesSync(join(r, n), old, old);
      Cgroups.detect();
      for (const r of roots) expect(existsSync(join(r, 'leftover-test'))).toBe(false);
      expect(existsSync(join(root, 'busy-test'))).toBe(true);
    } finally {
      sleeper.kill('SIGKILL');
      await new Promise((r) => sleeper.once('exit', r));
      await cg!.remove('busy-test');
    }
  });
});
