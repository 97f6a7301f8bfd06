/**
 * One instance per data dir: a second `mlfaas up` on it refuses ("already running, pid N"),
 * exits non-zero and touches nothing (the first keeps its Redis and answers); the lock of an
 * instance killed with SIGKILL is free at once. Every start makes the data dir 0700 and the
 * password file and Redis's log 0600, fixing what an earlier version left.
 */
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { passwordFile } from '../../gateway/auth-credentials';
import { up } from '../../cli/up';
import { loadConfig } from '../../gateway/config';
import { isAlive } from '../../gateway/lib/process';
import { eventually, TEST_ENV } from '../helpers/platform';

const ROOT = join(__dirname, '../..');

/** `mlfaas up` as a user runs it, stderr captured; `exit` resolves with its status. */
function mlfaasUp(dataDir: string, stackFile: string) {
  const child = spawn(process.execPath, [join(ROOT, 'bin/mlfaas'), 'up', '-f', stackFile], {
    cwd: ROOT,
    env: { ...process.env, MLFAAS_DATA_DIR: dataDir, MLFAAS_PORT: '0', MLFAAS_AGENT: 'false' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const out = { log: '' };
  child.stderr!.on('data', (b: Buffer) => (out.log += b.toString()));
  const exit = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  return { child, out, exit };
}

/** Whether `pid` runs (a zombie whose parent was killed, not reaped where pid 1 does not, does not). */
function running(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

/** Every file under `dir` (one level of subdirectories) with its mtime and size. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    const p = join(e.parentPath ?? e.path, e.name);
    if (e.isSocket()) continue;
    const st = statSync(p);
    out[p] = `${st.mtimeMs}:${st.size}:${(st.mode & 0o777).toString(8)}`;
  }
  return out;
}

it('a second mlfaas up on the same data dir refuses with the running pid and touches nothing; a SIGKILLed instance leaves no lock', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'mlfaas-cp-inst-'));
  const stackFile = join(dataDir, '..', `${dataDir.split('/').pop()}-stack.yml`);
  writeFileSync(stackFile, 'version: 1.0\nprovider:\n  name: openfaas\nfunctions: {}\n');
  const cfg = loadConfig({ ...TEST_ENV, MLFAAS_AGENT: 'false', MLFAAS_BASIC_AUTH: '', MLFAAS_DATA_DIR: dataDir });
  let platform: Awaited<ReturnType<typeof up>> | undefined;
  const first = mlfaasUp(dataDir, stackFile);
  try {
    // an instance killed with SIGKILL: its lock dies with it, its Redis too (pdeathsig)
    expect(await eventually(() => /ready: http/.test(first.out.log), 60000, 100)).toBe(true);
    const oldRedis = Number(readFileSync(join(dataDir, 'redis', 'redis.pid'), 'utf8'));
    first.child.kill('SIGKILL');
    await first.exit;
    // modes an older version (or a user) loosened are tightened again at the next start
    chmodSync(dataDir, 0o755);
    chmodSync(passwordFile(dataDir), 0o644);
    chmodSync(join(dataDir, 'redis', 'redis.log'), 0o644);

    const logged: string[] = [];
    platform = await up(cfg, { build: false, log: (l) => logged.push(l) });
    expect(platform.redis!.pid).not.toBe(oldRedis);
    expect(await eventually(() => !running(oldRedis), 10000)).toBe(true);
    expect(statSync(dataDir).mode & 0o777).toBe(0o700);
    expect(statSync(passwordFile(dataDir)).mode & 0o777).toBe(0o600);
    expect(statSync(join(dataDir, 'redis', 'redis.log')).mode & 0o777).toBe(0o600);
    expect(statSync(join(dataDir, 'mlfaas.lock')).mode & 0o777).toBe(0o600);

    // the second start, while this one runs
    const before = snapshot(dataDir);
    const redisPid = platform.redis!.pid;
    const second = mlfaasUp(dataDir, stackFile);
    expect(await second.exit).not.toBe(0);
    expect(second.out.log).toContain(`already running, pid ${process.pid}`);
    expect(isAlive(redisPid)).toBe(true);
    expect(platform.redis!.pid).toBe(redisPid);
    expect(platform.redis!.restarts).toBe(0);
    expect((await fetch(`${platform.gateway.url}/healthz`)).status).toBe(200);
    // the running instance's own writes append to its AOF meanwhile (leases, the autoscaler's
    // state): that file may only have grown; everything else is exactly as it was
    const after = snapshot(dataDir);
    const own = (p: string) => /appendonly\.aof\.\d+\.incr\.aof$/.test(p);
    for (const p of Object.keys(before).filter(own)) expect(Number(after[p].split(':')[1])).toBeGreaterThanOrEqual(Number(before[p].split(':')[1]));
    const rest = (snap: Record<string, string>) => Object.fromEntries(Object.entries(snap).filter(([p]) => !own(p)));
    expect(rest(after)).toEqual(rest(before));
  } finally {
    if (first.child.exitCode === null) first.child.kill('SIGKILL');
    await platform?.stop();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(stackFile, { force: true });
  }
}, 120000);
