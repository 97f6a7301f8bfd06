/** The decisions of scripts/setup.mjs: when node_modules is trusted, and waiting for apt's lock. */
import * as path from 'node:path';

interface CommandResult { status: number | null; stderr: string }
const lib = require(path.join(__dirname, '..', '..', 'scripts', 'setup-lib.cjs')) as {
  INSTALL_MARKER: string;
  installFingerprint(packageJson: string, packageLock: string): string;
  installDecision(s: { nodeModules: boolean; marker: string | null; fingerprint: string }): { install: boolean; reason: string };
  isAptLockError(stderr: string): boolean;
  runWaitingForAptLock(o: {
    run: () => CommandResult; sleep: (ms: number) => void; now: () => number; log: (m: string) => void;
    what: string; timeoutMs?: number; intervalMs?: number;
  }): CommandResult & { waitedMs: number; attempts: number };
};

const LOCKED = 'E: Could not get lock /var/lib/dpkg/lock-frontend. It is held by process 4242 (apt-get)\n' +
  'E: Unable to acquire the dpkg frontend lock (/var/lib/dpkg/lock-frontend), is another process using it?\n';

describe('install marker', () => {
  const fp = lib.installFingerprint('{"name":"x"}', '{"lockfileVersion":3}');

  test('the fingerprint changes with either file and not otherwise', () => {
    expect(lib.installFingerprint('{"name":"x"}', '{"lockfileVersion":3}')).toBe(fp);
    expect(fp).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(lib.installFingerprint('{"name":"y"}', '{"lockfileVersion":3}')).not.toBe(fp);
    expect(lib.installFingerprint('{"name":"x"}', '{"lockfileVersion":2}')).not.toBe(fp);
    // the boundary between the two files is part of the hash
    expect(lib.installFingerprint('ab', 'c')).not.toBe(lib.installFingerprint('a', 'bc'));
  });

  test.each([
    { name: 'no node_modules', input: { nodeModules: false, marker: null }, install: true, reason: /missing/ },
    // what an npm install killed half-way leaves: node_modules (even with npm's own
    // .package-lock.json) but not our marker
    { name: 'node_modules without marker (interrupted install)', input: { nodeModules: true, marker: null }, install: true, reason: /marker/ },
    { name: 'marker of other files', input: { nodeModules: true, marker: 'sha256:00' }, install: true, reason: /changed/ },
    { name: 'empty marker', input: { nodeModules: true, marker: '' }, install: true, reason: /changed/ },
    { name: 'marker of these files', input: { nodeModules: true, marker: `${fp}\n` }, install: false, reason: /up to date/ },
  ])('$name', ({ input, install, reason }) => {
    const d = lib.installDecision({ ...input, fingerprint: fp });
    expect(d.install).toBe(install);
    expect(d.reason).toMatch(reason);
  });

  test('the marker has a name of its own (npm writes node_modules/.package-lock.json early)', () => {
    expect(lib.INSTALL_MARKER).toBe('.mlfaas-install');
  });
});

describe('waiting for the apt/dpkg lock', () => {
  test.each([
    { name: 'dpkg frontend lock', input: LOCKED, want: true },
    { name: 'lists lock (apt-get update)',
      input: 'E: Could not get lock /var/lib/apt/lists/lock. It is held by process 77 (apt-get)\nE: Unable to lock directory /var/lib/apt/lists/\n',
      want: true },
    { name: 'dpkg administration directory', input: 'E: Unable to lock the administration directory (/var/lib/dpkg/), is another process using it?',
      want: true },
    { name: 'no such package', input: 'E: Unable to locate package redis-serverr\n', want: false },
    { name: 'network', input: 'W: Failed to fetch http://deb.debian.org/debian/dists/bookworm/InRelease  Temporary failure resolving\n', want: false },
  ])('isAptLockError: $name', ({ input, want }) => {
    expect(lib.isAptLockError(input)).toBe(want);
  });

  /** A fake clock; `run` results in order; each run takes `runMs`. */
  function harness(results: CommandResult[], runMs = 0) {
    let t = 0;
    const logs: string[] = [];
    const sleeps: number[] = [];
    const r = lib.runWaitingForAptLock({
      what: 'apt-get install',
      run: () => { t += runMs; return results.shift() ?? { status: 0, stderr: '' }; },
      sleep: (ms) => { sleeps.push(ms); t += ms; },
      now: () => t,
      log: (m) => logs.push(m),
      timeoutMs: 60000,
      intervalMs: 15000,
    });
    return { r, logs, sleeps };
  }

  test('succeeds at once without waiting', () => {
    const { r, logs, sleeps } = harness([{ status: 0, stderr: '' }]);
    expect(r).toMatchObject({ status: 0, attempts: 1, waitedMs: 0 });
    expect(logs).toEqual([]);
    expect(sleeps).toEqual([]);
  });

  test('waits while the lock is held, with a message each interval, then runs', () => {
    const { r, logs, sleeps } = harness([{ status: 100, stderr: LOCKED }, { status: 100, stderr: LOCKED }, { status: 0, stderr: '' }]);
    expect(r).toMatchObject({ status: 0, attempts: 3, waitedMs: 30000 });
    expect(sleeps).toEqual([15000, 15000]);
    expect(logs).toHaveLength(2);
    expect(logs[0]).toMatch(/another apt-get or dpkg holds the lock; waiting \(0 s of at most 60 s\)/);
    expect(logs[1]).toMatch(/15 s of at most 60 s/);
  });

  test('time apt-get spent waiting itself (DPkg::Lock::Timeout) counts towards the interval', () => {
    const { r, sleeps } = harness([{ status: 100, stderr: LOCKED }, { status: 0, stderr: '' }], 15000);
    expect(r).toMatchObject({ status: 0, attempts: 2 });
    expect(sleeps).toEqual([]);
  });

  test('gives up after the bound with the lock error and a message saying what to do', () => {
    const { r, logs } = harness(Array.from({ length: 100 }, () => ({ status: 100, stderr: LOCKED })));
    expect(r.status).toBe(100);
    expect(r.waitedMs).toBe(60000);
    expect(r.attempts).toBe(5);
    expect(logs[logs.length - 1]).toMatch(/still holds the lock after 60 s; giving up/);
  });

  test('another failure is returned at once, not retried', () => {
    const { r, sleeps } = harness([{ status: 100, stderr: 'E: Unable to locate package redis-serverr\n' }]);
    expect(r).toMatchObject({ status: 100, attempts: 1 });
    expect(sleeps).toEqual([]);
  });
});
