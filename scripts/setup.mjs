#!/usr/bin/env node
// One-time and every-time set-up for `npm start` and `npm test` on a fresh machine:
// node modules, redis-server (from Debian, when root), the native build.
// Idempotent and quiet when everything is already there.
import { execSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const { INSTALL_MARKER, installDecision, installFingerprint, runWaitingForAptLock } =
  createRequire(import.meta.url)('./setup-lib.cjs');

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const log = (m) => process.stderr.write(`[setup] ${m}\n`);

function has(cmd) {
  return spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0;
}

function run(cmd, opts = {}) {
  log(cmd);
  execSync(cmd, { cwd: root, stdio: ['ignore', 'inherit', 'inherit'], ...opts });
}

const readOr = (file, dflt) => (existsSync(file) ? readFileSync(file, 'utf8') : dflt);
const fingerprint = () =>
  installFingerprint(readFileSync(join(root, 'package.json'), 'utf8'), readOr(join(root, 'package-lock.json'), ''));

// node_modules is trusted only with our marker, written after an `npm install` that exited 0 and
// holding the hash of package.json + package-lock.json it installed: an install killed half-way
// (out of memory, Ctrl-C) leaves no marker, so the next run installs again.
function nodeModules() {
  const dir = join(root, 'node_modules');
  const markerFile = join(dir, INSTALL_MARKER);
  const d = installDecision({ nodeModules: existsSync(dir), marker: readOr(markerFile, null), fingerprint: fingerprint() });
  if (!d.install) return;
  log(`installing node modules: ${d.reason}`);
  rmSync(markerFile, { force: true });
  // `npm install` (not `npm ci`): this npm writes lock files without other platforms' optional
  // binaries (@swc/core-*, msgpackr-extract-*), which `npm ci` then rejects as out of sync.
  run('npm install --no-audit --no-fund', { env: { ...process.env, ONNXRUNTIME_NODE_INSTALL: 'skip' } });
  // after the install: npm may have rewritten package-lock.json
  writeFileSync(markerFile, `${fingerprint()}\n`);
}

const sleepSync = (ms) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

/** apt-get, waiting (bounded, with a message every 15 s) while another apt-get or dpkg holds its lock. */
function aptGet(args, env) {
  const cmd = `apt-get -o DPkg::Lock::Timeout=15 ${args}`;
  log(cmd);
  const r = runWaitingForAptLock({
    what: `apt-get ${args.split(' ')[0]}`,
    run: () => {
      const p = spawnSync('sh', ['-c', cmd], { cwd: root, env, stdio: ['ignore', 'inherit', 'pipe'], encoding: 'utf8' });
      process.stderr.write(p.stderr ?? '');
      return { status: p.status, stderr: p.stderr ?? '' };
    },
    sleep: sleepSync,
    now: Date.now,
    log,
  });
  if (r.status !== 0) {
    log(`${cmd} failed (exit ${r.status})`);
    process.exit(1);
  }
}

/** Debian packages the platform uses when present: missing ones installed together (root only). */
function packages() {
  const want = [
    ['redis-server', 'redis-server', true], // the embedded store: required
    ['nft', 'nftables', false], // MLFAAS_FUNCTION_EGRESS=internet: the replicas' firewall
    ['chromium', 'chromium', false], // the dashboard's browser tests (test/ui, playwright-core drives /usr/bin/chromium)
    ['prometheus', 'prometheus', false], // the Grafana dashboards' queries run by a real Prometheus (test/integration/grafana-metrics.test.ts)
  ].filter(([cmd]) => !has(cmd) && !existsSync(`/usr/sbin/${cmd}`));
  if (!want.length) return;
  if (want.some(([, , required]) => required)) return redis(want.map(([, pkg]) => pkg));
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  if (!isRoot) return;
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  aptGet('update -q', env);
  aptGet(`install -y -q --no-install-recommends ${want.map(([, pkg]) => pkg).join(' ')}`, env);
}

function redis(pkgs = ['redis-server']) {
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  if (!isRoot) {
    log('redis-server is missing and this is not root. Install it with:');
    log('  sudo apt-get update && sudo apt-get install -y redis-server');
    log('or put a redis-server binary on PATH, then run this command again.');
    process.exit(1);
  }
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  aptGet('update -q', env);
  aptGet(`install -y -q --no-install-recommends ${pkgs.join(' ')}`, env);
  // Debian's package starts a system service on 6379; mlfaas runs its own redis-server.
  spawnSync('sh', ['-c', 'service redis-server stop || true'], { stdio: 'ignore' });
}

/**
 * PyTorch for the ml-inference-torch template (functions/resnet-torch): Debian's python3-torch and
 * python3-torchvision for /usr/bin/python3 (templates/ml-inference-torch/start.sh's default), unless
 * MLFAAS_PYTHON or the GPU machine's /opt/torch venv provides it. Root only; else says how.
 */
function torch() {
  if (process.env.MLFAAS_PYTHON || existsSync('/opt/torch/.venv/bin/python3')) return;
  const dist = '/usr/lib/python3/dist-packages';
  const want = [['torch', 'python3-torch'], ['torchvision', 'python3-torchvision'], ['numpy', 'python3-numpy']]
    .filter(([mod]) => !existsSync(join(dist, mod, '__init__.py')));
  if (!want.length) return;
  const pkgs = want.map(([, pkg]) => pkg).join(' ');
  if (!(typeof process.getuid === 'function' && process.getuid() === 0)) {
    log(`PyTorch for the ml-inference-torch functions is missing: sudo apt-get install -y ${pkgs} (or set MLFAAS_PYTHON)`);
    return;
  }
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  aptGet('update -q', env);
  aptGet(`install -y -q --no-install-recommends ${pkgs}`, env);
}

function native() {
  if (!existsSync(join(root, 'native', 'Makefile'))) return;
  if (!has('make') || !has('cc')) {
    log('make or cc missing: native token limiter not built (CPU quotas and the CUDA limiter disabled)');
    return;
  }
  run('make -s -C native');
}

nodeModules();
packages();
torch();
native();
