import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Config, loadConfig } from '../../gateway/config';
import { EmbeddedRedis, startEmbeddedRedis } from '../../gateway/lib/redis-server';
import { ImageStore } from '../../gateway/providers/local/image-store';
import type { Gateway } from '../../gateway/server';
import { startPlatformGateway } from '../../cli/compose';

/** A real redis-server in a temp dir (unix socket, plus a TCP port when asked). */
export async function testRedis(port = 0): Promise<EmbeddedRedis & { dir: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'mlfaas-redis-'));
  const r = await startEmbeddedRedis({ dir, port });
  return {
    ...r,
    dir,
    async stop() {
      await r.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Fast timings for tests; anything can be overridden with MLFAAS_* variables. */
export const TEST_ENV: Record<string, string> = {
  MLFAAS_PORT: '0',
  MLFAAS_BASIC_AUTH: 'false', // suites that test auth (and its default) turn it on
  MLFAAS_READINESS_TIMEOUT_MS: '30000',
  MLFAAS_DRAIN_MS: '100',
  MLFAAS_TERMINATION_GRACE_MS: '3000',
  MLFAAS_ASYNC_LOCK_MS: '2000',
  MLFAAS_SCALE_FROM_ZERO_TIMEOUT_MS: '30000',
  MLFAAS_PROFILE_SECONDS: '0', // suites that test profiling turn it on
};

export interface TestPlatform {
  gw: Gateway;
  cfg: Config;
  images: ImageStore;
  dataDir: string;
  get(path: string, init?: RequestInit): Promise<Response>;
  json(method: string, path: string, body: unknown, headers?: Record<string, string>): Promise<Response>;
  stop(): Promise<void>;
}

/** A gateway (with agent unless MLFAAS_AGENT=false) on a random port against `redisTarget`. */
export async function testGateway(redisTarget: string, env: Record<string, string> = {}, dataDir?: string): Promise<TestPlatform> {
  const dir = dataDir ?? mkdtempSync(join(tmpdir(), 'mlfaas-data-'));
  const cfg = loadConfig({ ...TEST_ENV, MLFAAS_DATA_DIR: dir, ...env });
  const gw = await startPlatformGateway(cfg, redisTarget);
  const images = new ImageStore(join(dir, 'images'));
  return {
    gw,
    cfg,
    images,
    dataDir: dir,
    get: (path, init) => fetch(gw.url + path, init),
    json: (method, path, body, headers = {}) =>
      fetch(gw.url + path, { method, body: JSON.stringify(body), headers: { 'content-type': 'application/json', ...headers } }),
    async stop() {
      await gw.close();
      if (!dataDir) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Polls `fn` until it returns truthy or `timeoutMs` passes; returns the last value. */
export async function eventually<T>(fn: () => Promise<T> | T, timeoutMs = 15000, everyMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let v = await fn();
  while (!v && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, everyMs));
    v = await fn();
  }
  return v;
}
