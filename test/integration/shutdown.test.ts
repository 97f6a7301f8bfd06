/**
 * Ctrl-C in a terminal sends SIGINT to the whole process group of `mlfaas up` (Redis, tokend and
 * replicas get it at the same moment as the platform): shutdown ends in bounded time and leaves
 * no redis-server or tokend behind; a second Ctrl-C forces the exit.
 */
import { ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isAlive } from '../../gateway/lib/process';
import { ImageStore } from '../../gateway/providers/local/image-store';
import { seedImage } from '../helpers/images';
import { eventually } from '../helpers/platform';

const ROOT = join(__dirname, '../..');
/** Generous on a busy 2-core machine; a hang is what this catches. */
const EXIT_BOUND_MS = 20_000;

/** Processes whose command line mentions `dir` (redis-server, tokend, replicas of this data dir). */
function processesUsing(dir: string): number[] {
  const out: number[] = [];
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try {
      if (readFileSync(`/proc/${e}/cmdline`, 'utf8').includes(dir)) out.push(Number(e));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** `mlfaas up` in its own process group (as a terminal runs it); resolves once it says ready. */
async function up(dataDir: string, stack: string, env: Record<string, string> = {}): Promise<{ child: ChildProcess; log: () => string }> {
  const child = spawn(process.execPath, [join(ROOT, 'bin/mlfaas'), 'up', '--no-build', '-f', stack], {
    cwd: ROOT,
    env: { ...process.env, MLFAAS_DATA_DIR: dataDir, MLFAAS_PORT: '0', MLFAAS_AUTOSCALER: 'false', MLFAAS_PROFILE_SECONDS: '0', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
    detached: true,
  });
  let log = '';
  child.stderr!.on('data', (b: Buffer) => (log += b.toString()));
  const ready = await eventually(() => /ready: http/.test(log) || child.exitCode !== null, 60000, 100);
  if (!ready || child.exitCode !== null) throw new Error(`mlfaas up did not get ready:\n${log}`);
  return { child, log: () => log };
}

function exitWithin(child: ChildProcess, ms: number): Promise<{ code: number | null; ms: number } | 'hung'> {
  const t0 = Date.now();
  if (child.exitCode !== null) return Promise.resolve({ code: child.exitCode, ms: 0 });
  return new Promise((resolve) => {
    const t = setTimeout(() => resolve('hung'), ms);
    child.once('exit', (code) => {
      clearTimeout(t);
      resolve({ code, ms: Date.now() - t0 });
    });
  });
}

describe('Ctrl-C on mlfaas up', () => {
  let dataDir: string;
  let child: ChildProcess | undefined;
  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'mlfaas-sigint-'));
  });
  afterEach(() => {
    if (child && child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, 'SIGKILL');
    for (const pid of processesUsing(dataDir)) process.kill(pid, 'SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('SIGINT to the process group stops everything in bounded time, whatever dies first', async () => {
    const stack = join(dataDir, 'stack.yml');
    writeFileSync(stack, 'provider:\n  name: openfaas\nfunctions: {}\n');
    const u = await up(dataDir, stack);
    child = u.child;
    const redisPid = Number(readFileSync(join(dataDir, 'redis', 'redis.pid'), 'utf8'));
    const started = processesUsing(dataDir);
    expect(started).toContain(redisPid);
    expect(started.length).toBeGreaterThanOrEqual(2); // redis-server and tokend (setpriv execs it)
    process.kill(-child.pid!, 'SIGINT');
    const r = await exitWithin(child, EXIT_BOUND_MS);
    expect(r).not.toBe('hung');
    expect(r).toEqual(expect.objectContaining({ code: 0 }));
    expect(u.log()).toMatch(/SIGINT: stopping/);
    expect(await eventually(() => started.every((p) => !isAlive(p)), 10000, 100)).toBe(true);
  }, 120000);

  it('a second SIGINT forces the exit (130) while a replica holds the stop', async () => {
    // a replica that ignores SIGINT and SIGTERM: the stop waits out the termination grace
    const store = new ImageStore(join(dataDir, 'images'));
    const server = `require('http').createServer((q, s) => s.end('ok')).listen(Number(process.env.PORT), '127.0.0.1');
process.on('SIGINT', () => {}); process.on('SIGTERM', () => {});`;
    seedImage(store, 'test/stubborn:1', { 'server.js': server },
      { language: 'node', kind: 'inference', mode: 'http', fprocess: 'node server.js', readiness: '/' });
    const stack = join(dataDir, 'stack.yml');
    writeFileSync(stack, 'provider:\n  name: openfaas\nfunctions:\n  stubborn:\n    image: test/stubborn:1\n    labels:\n      com.openfaas.scale.min: "1"\n');
    const u = await up(dataDir, stack, { MLFAAS_TERMINATION_GRACE_MS: '60000', MLFAAS_DRAIN_MS: '0' });
    child = u.child;
    process.kill(-child.pid!, 'SIGINT');
    expect(await eventually(() => /SIGINT: stopping/.test(u.log()), 10000, 50)).toBe(true);
    await new Promise((r) => setTimeout(r, 1500)); // a new Ctrl-C, not npm's forwarded copy of the first
    expect(child.exitCode).toBeNull(); // still waiting for the stubborn replica
    process.kill(-child.pid!, 'SIGINT');
    const r = await exitWithin(child, EXIT_BOUND_MS);
    expect(r).toEqual(expect.objectContaining({ code: 130 }));
  }, 120000);
});
