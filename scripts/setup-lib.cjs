// @ts-check
// The decisions scripts/setup.mjs makes, as plain functions with no dependencies (setup runs
// before node_modules exists), tested in test/unit/setup-lib.test.ts.
'use strict';
const { createHash } = require('node:crypto');

/** Name of the marker file inside node_modules, written only after a complete `npm install`. */
const INSTALL_MARKER = '.mlfaas-install';

/**
 * What a complete install was made from: a hash of package.json and package-lock.json.
 * @param {string} packageJson text of package.json
 * @param {string} packageLock text of package-lock.json ('' when there is none)
 * @returns {string} `sha256:<hex>`
 */
function installFingerprint(packageJson, packageLock) {
  const h = createHash('sha256');
  h.update('package.json\0').update(packageJson).update('\0package-lock.json\0').update(packageLock);
  return `sha256:${h.digest('hex')}`;
}

/**
 * Whether node_modules must be (re)installed.
 * @param {{ nodeModules: boolean, marker: string | null, fingerprint: string }} s
 *   nodeModules: the directory exists; marker: the marker's text, null when absent;
 *   fingerprint: installFingerprint of the current files
 * @returns {{ install: boolean, reason: string }}
 */
function installDecision(s) {
  if (!s.nodeModules) return { install: true, reason: 'node_modules is missing' };
  if (s.marker === null) {
    return { install: true, reason: 'node_modules has no complete-install marker (an interrupted or older install)' };
  }
  if (s.marker.trim() !== s.fingerprint) {
    return { install: true, reason: 'package.json or package-lock.json changed since the last install' };
  }
  return { install: false, reason: 'up to date' };
}

/**
 * True when apt-get or dpkg failed because another process holds one of their locks.
 * @param {string} stderr
 */
function isAptLockError(stderr) {
  return /Could not get lock|Unable to acquire the dpkg frontend lock|Unable to lock (the )?(directory|administration)|is another process using it/i.test(stderr);
}

/**
 * @typedef {{ status: number | null, stderr: string }} CommandResult
 * @typedef {{
 *   run: () => CommandResult,
 *   sleep: (ms: number) => void,
 *   now: () => number,
 *   log: (message: string) => void,
 *   what: string,
 *   timeoutMs?: number,
 *   intervalMs?: number,
 * }} LockWaitOptions
 */

/**
 * Runs an apt-get command, and while it fails only because another apt-get/dpkg holds the lock,
 * waits and runs it again: a message every `intervalMs` (15 s), up to `timeoutMs` (5 min).
 * A command that holds the lock itself (apt-get -o DPkg::Lock::Timeout=…) counts its own
 * waiting towards the interval. Returns the last result; its status is non-zero on failure.
 * @param {LockWaitOptions} o
 * @returns {CommandResult & { waitedMs: number, attempts: number }}
 */
function runWaitingForAptLock(o) {
  const timeoutMs = o.timeoutMs ?? 300000;
  const intervalMs = o.intervalMs ?? 15000;
  const t0 = o.now();
  for (let attempts = 1; ; attempts++) {
    const started = o.now();
    const r = o.run();
    const waitedMs = o.now() - t0;
    if (r.status === 0 || !isAptLockError(r.stderr)) return { ...r, waitedMs, attempts };
    if (waitedMs >= timeoutMs) {
      o.log(`${o.what}: another apt-get or dpkg still holds the lock after ${Math.round(waitedMs / 1000)} s; giving up. ` +
        'Wait for it to finish (ps -C apt-get,dpkg -o pid,args) and run this command again.');
      return { ...r, waitedMs, attempts };
    }
    o.log(`${o.what}: another apt-get or dpkg holds the lock; waiting (${Math.round(waitedMs / 1000)} s of at most ${Math.round(timeoutMs / 1000)} s)`);
    const rest = Math.min(intervalMs - (o.now() - started), timeoutMs - (o.now() - t0));
    if (rest > 0) o.sleep(rest);
  }
}

module.exports = { INSTALL_MARKER, installFingerprint, installDecision, isAptLockError, runWaitingForAptLock };
