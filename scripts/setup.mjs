#!/usr/bin/env node
// One-time and every-time set-up for `npm start` and `npm test` on a fresh machine:
// node modules, redis-server (from Debian, when root), the native build.
// Idempotent and quiet when everything is already there.
import { execSync, spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const log = (m) => process.stderr.write(`[setup] ${m}\n`);

function has(cmd) {
  return spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0;
}

function run(cmd, opts = {}) {
  log(cmd);
  execSync(cmd, { cwd: root, stdio: ['ignore', 'inherit', 'inherit'], ...opts });
}

function nodeModules() {
  const marker = join(root, 'node_modules', '.package-lock.json');
  const lock = join(root, 'package-lock.json');
  if (existsSync(marker) && statSync(marker).mtimeMs >= statSync(lock).mtimeMs) return;
  // `npm install` (not `npm ci`): this npm writes lock files without other platforms' optional
  // binaries (@swc/core-*, msgpackr-extract-*), which `npm ci` then rejects as out of sync.
  run('npm install --no-audit --no-fund', { env: { ...process.env, ONNXRUNTIME_NODE_INSTALL: 'skip' } });
}

function redis() {
  if (has('redis-server')) return;
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  if (!isRoot) {
    log('redis-server is missing and this is not root. Install it with:');
    log('  sudo apt-get update && sudo apt-get install -y redis-server');
    log('or put a redis-server binary on PATH, then run this command again.');
    process.exit(1);
  }
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  run('apt-get update -q', { env });
  run('apt-get install -y -q --no-install-recommends redis-server', { env });
  // Debian's package starts a system service on 6379; mlfaas runs its own redis-server.
  spawnSync('sh', ['-c', 'service redis-server stop || true'], { stdio: 'ignore' });
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
redis();
native();
