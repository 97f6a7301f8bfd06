import { chmodSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Config } from '../gateway/config';
import { PlatformError, ErrorCode } from '../gateway/errors';
import { bounded } from '../gateway/lib/bounded';
import { acquireLock } from '../gateway/lib/instance-lock';
import { EmbeddedRedis, startEmbeddedRedis } from '../gateway/lib/redis-server';
import { ImageStore } from '../gateway/providers/local/image-store';
import { parseDeployment } from '../gateway/registry/function-spec';
import type { Gateway } from '../gateway/server';
import { startPlatformGateway } from './compose';
import { autoscalerPolicyName, startAutoscaler } from '../autoscaler/live/start';
import { buildFunction, templateFprocess } from './build';
import { readStack, toDeployment } from './stack';

export interface UpOptions {
  stackFile?: string;
  /** Build the stack's images first (default true). */
  build: boolean;
  log: (line: string) => void;
}

export interface Platform {
  gateway: Gateway;
  redis?: EmbeddedRedis;
  stop(): Promise<void>;
}

/**
 * Starts Redis (embedded unless a URL is configured), the gateway with its agent, and deploys a
 * stack. One instance per data dir: while another holds `<dataDir>/mlfaas.lock` this throws
 * `AlreadyRunningError` ("already running, pid N") before touching anything.
 */
export async function up(cfg: Config, opts: UpOptions): Promise<Platform> {
  mkdirSync(cfg.dataDir, { recursive: true, mode: 0o700 });
  const lock = await acquireLock(join(cfg.dataDir, 'mlfaas.lock'), `mlfaas on ${cfg.dataDir}`);
  let redis: EmbeddedRedis | undefined;
  let gateway: Gateway;
  try {
    chmodSync(cfg.dataDir, 0o700); // secrets, Redis, images, logs: unreadable to function uids
    if (!cfg.redisUrl) {
      redis = await startEmbeddedRedis({ dir: cfg.dataDir, log: opts.log });
      opts.log(`redis-server (pid ${redis.pid}, supervised) on ${redis.socketPath}, AOF in ${join(cfg.dataDir, 'redis')}`);
    }
    gateway = await startPlatformGateway(cfg, cfg.redisUrl ?? redis!.url, { embeddedRedis: redis });
  } catch (e) {
    await redis?.stop();
    await lock.release();
    throw e;
  }
  opts.log(`gateway on ${gateway.url} (provider: local, agent: ${gateway.agent ? 'yes' : 'no'})`);
  gateway.notices.forEach(opts.log);
  const autoscaler = cfg.autoscaler.enabled ? await startAutoscaler(cfg, gateway.redis, gateway.provider) : undefined;
  if (autoscaler) opts.log(`inference autoscaler: ${autoscalerPolicyName(cfg)}, every ${cfg.autoscaler.intervalMs} ms`);
  // bounded whatever died first: Ctrl-C reaches Redis at the same moment as us
  const stop = async () => {
    await bounded('autoscaler', 3000, () => autoscaler?.close(), opts.log);
    await gateway.close();
    await bounded('redis-server', 8000, () => redis?.stop(), opts.log);
    await lock.release();
  };
  try {
    if (opts.stackFile) await deployStack(gateway, cfg, opts);
  } catch (e) {
    await stop();
    throw e;
  }
  return { gateway, redis, stop };
}

async function deployStack(gw: Gateway, cfg: Config, opts: UpOptions): Promise<void> {
  const stack = readStack(opts.stackFile!);
  const store = new ImageStore(join(cfg.dataDir, 'images'));
  for (const f of stack.functions) {
    if (opts.build && f.lang) {
      const m = buildFunction(f, stack.file, cfg.templatesDir, store);
      opts.log(`built ${f.name} → ${m.image} (${m.kind})`);
    }
    // as faas-cli deploy does: without it a restart would replace the envProcess a faas-cli
    // deploy stored, and describe would show "Function Process: <default>"
    const spec = parseDeployment(toDeployment(f, templateFprocess(f, stack.file, cfg.templatesDir)));
    try {
      await gw.provider.update(spec);
    } catch (e) {
      if (!(e instanceof PlatformError && e.code === ErrorCode.NotFound)) throw e;
      await gw.provider.deploy(spec);
    }
    opts.log(`deployed ${f.name}: ${gw.url}/function/${f.name}`);
  }
}

/** Resolves when every function with desired replicas > 0 has them all ready (or the deadline passes). */
export async function waitReady(gw: Gateway, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const all = await gw.provider.list();
    if (all.every((s) => s.availableReplicas >= s.replicas)) return true;
    await new Promise((r) => setTimeout(r, 200));
  }
  return false;
}
