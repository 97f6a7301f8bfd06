/** Shared fixtures for the native tests: build once, run real programs, parse their output. */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';

export const repoRoot = path.resolve(__dirname, '..', '..');
export const nativeDir = path.join(repoRoot, 'native');
export const buildDir = path.join(nativeDir, 'build');
export const stubDir = path.join(buildDir, 'stub');
export const limiterSo = path.join(buildDir, 'liblimiter.so');
export const haveCuda = existsSync('/usr/local/cuda/include/cuda.h');

/** `make -C native <target>`; idempotent, quick when up to date. */
/**
 * Builds a native target. Serialised across jest workers by a lock file: on a fresh checkout two
 * suites building at once rewrote libcuda.so.1 / liblimiter.so while the other's processes loaded
 * them (seen: a clean-clone CI run where the stub-GPU replicas never became ready).
 */
export function make(target = 'test-progs'): void {
  mkdirSync(path.join(nativeDir, 'build'), { recursive: true });
  execFileSync('flock', [path.join(nativeDir, 'build', '.make.lock'), 'make', '-s', '-C', nativeDir, target], { stdio: ['ignore', 'ignore', 'inherit'] });
}

export function tmp(prefix = 'tl-'): { dir: string; cleanup(): void } {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
  /** every stdout line that parses as JSON */
  json: Record<string, number | string>[];
}

export interface Running {
  pid: number;
  done: Promise<RunResult>;
}

/** Spawn a program; `done` resolves with its output. Killed after timeoutMs. */
export function start(cmd: string, args: string[], env: Record<string, string> = {}, timeoutMs = 30000): Running {
  const child = spawn(cmd, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => { stdout += d; });
  child.stderr.setEncoding('utf8').on('data', (d: string) => { stderr += d; });
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const done = new Promise<RunResult>((resolve) => {
    child.on('close', (code) => {
      clearTimeout(timer);
      const json = stdout.split('\n').flatMap((l) => {
        try { return l.startsWith('{') ? [JSON.parse(l)] : []; } catch { return []; }
      });
      resolve({ code, stdout, stderr, json });
    });
  });
  return { pid: child.pid as number, done };
}

export function run(cmd: string, args: string[], env: Record<string, string> = {}, timeoutMs = 30000): Promise<RunResult> {
  return start(cmd, args, env, timeoutMs).done;
}

/** Environment for a program under the limiter on the stub driver. */
export function limiterEnv(extra: Record<string, string> = {}): Record<string, string> {
  return { LD_LIBRARY_PATH: stubDir, LD_PRELOAD: limiterSo, ...extra };
}

/** key=value lines written by the limiter at exit (TL_STATS_FILE). */
export function readStats(file: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const l of readFileSync(file, 'utf8').split('\n')) {
    const [k, v] = l.split('=');
    if (k && v !== undefined) out[k] = Number(v);
  }
  return out;
}

/** CLOCK_MONOTONIC timestamps (ns) from a --trace file. */
export function readTrace(file: string): number[] {
  return readFileSync(file, 'utf8').split('\n').filter(Boolean).map(Number).sort((a, b) => a - b);
}

/** Events in [lo, hi). */
export function countIn(ts: number[], lo: number, hi: number): number {
  return ts.filter((t) => t >= lo && t < hi).length;
}

export const monoNs = (): number => Number(process.hrtime.bigint());
export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Retries of a measurement whose calibration shows that the host interfered. */
export const ATTEMPTS = 3;
/** Above this fraction of wall time lost to the host (not to the work, not to waiting for
 * tokens), a measurement is taken again. */
export const INTERFERENCE = 0.1;

/**
 * Runs `measure` until the calibration it took in the same window (`worst`: the largest
 * fraction of wall time a measured process spent waiting for a CPU) shows no interference, at
 * most ATTEMPTS times. `quiet` is false when even the last attempt was disturbed: a test then
 * asserts only what the mechanism guarantees on any host (upper bounds, order), not what a quiet
 * host adds (lower bounds, exact shares).
 */
export async function calibrated<T extends { worst: number }>(measure: () => Promise<T>): Promise<T & { quiet: boolean }> {
  for (let i = 1; ; i++) {
    const m = await measure();
    if (m.worst <= INTERFERENCE) return { ...m, quiet: true };
    console.log(`attempt ${i}: host interference ${m.worst.toFixed(3)} > ${INTERFERENCE}${i < ATTEMPTS ? ', measuring again' : '; lower bounds not asserted'}`);
    if (i >= ATTEMPTS) return { ...m, quiet: false };
  }
}
