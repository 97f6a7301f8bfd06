import { ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join, resolve } from 'node:path';
import type Redis from 'ioredis';
import { request } from 'undici';
import { coresOfDevice } from '../../node-runtime/cpu-values';
import { connectRedis, startEmbeddedRedis } from '../../gateway/lib/redis-server';
import { DEFAULT_NAMESPACE, refKey } from '../../gateway/lib/names';
import { keys, replicaSettingsKey } from '../../gateway/registry/keys';
import type { CapabilityProfile } from '../../node-runtime/profiler';
import type { Sample } from './cost';

const ROOT = resolve(__dirname, '..', '..');

/** The bench's functions: one light, one heavy, each with its SLO (as in stack.yml). */
export const FUNCTIONS = [
  { name: 'digits-classify', sloMs: 50, percentile: 99, minScale: 1, maxScale: 4, maxBatch: 16,
    body: () => JSON.stringify({ instances: [Array.from({ length: 64 }, (_, i) => i % 17)] }) },
  { name: 'image-classify', sloMs: 200, percentile: 99, minScale: 0, maxScale: 2, maxBatch: 8, body: () => '{"random":1}' },
];

/** A stack file naming the example functions by absolute path (the data dir is elsewhere). */
export function writeStack(dir: string, zeroS: number): string {
  const f = (name: string, min: number, max: number, slo: number, batch: number, zero: boolean) => `  ${name}:
    lang: ml-inference
    handler: ${join(ROOT, 'functions', name)}
    image: mlfaas/${name}:0.1.0
    labels:
      com.openfaas.scale.min: "${min}"
      com.openfaas.scale.max: "${max}"${zero ? `\n      com.openfaas.scale.zero: "true"\n      com.openfaas.scale.zero-duration: "${zeroS}s"` : ''}
    annotations:
      mlfaas.slo.latency_ms: "${slo}"
      mlfaas.slo.percentile: "99"
      mlfaas.batch.max: "${batch}"
`;
  const text = `version: 1.0\nprovider:\n  name: openfaas\n  gateway: ` +
    `http://127.0.0.1:8080\nfunctions:\n${FUNCTIONS.map((x) => f(x.name, x.minScale, x.maxScale, x.sloMs, x.maxBatch, x.minScale === 0)).join('')}`;
  const p = join(dir, 'stack.yml');
  writeFileSync(p, text);
  return p;
}

/** The heavy function's com.openfaas.scale.zero-duration, s. */
export const ZERO_S = 20;

export interface Platform {
  url: string;
  redis: Redis;
  stop(): Promise<void>;
}

/** `node bin/mlfaas up` as a child process on a free port, its own data dir and Redis, auth off. */
export async function startPlatform(dir: string, policy: string, env: Record<string, string>, log: (l: string) => void,
  stackFile?: string): Promise<Platform> {
  mkdirSync(dir, { recursive: true });
  const embedded = await startEmbeddedRedis({ dir: join(dir, 'r') });
  // another bench's stack (`stackFile`), or this one's two functions
  const stack = stackFile ?? writeStack(dir, Number(env.BENCH_ZERO_S ?? ZERO_S));
  const child: ChildProcess = spawn(process.execPath, [join(ROOT, 'bin', 'mlfaas'), 'up', '-f', stack, '--port', '0', '--redis-url', embedded.url], {
    cwd: dir,
    env: { ...process.env, MLFAAS_BASIC_AUTH: 'false', MLFAAS_DATA_DIR: join(dir, 'data'), MLFAAS_AUTOSCALER_POLICY: policy, MLFAAS_PROFILE_SECONDS: '1',
      ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const url = await new Promise<string>((ok, fail) => {
    const timer = setTimeout(() => fail(new Error(`mlfaas up not listening after 120 s:\n${out.slice(-2000)}`)), 120_000);
    const on = (b: Buffer) => {
      out += b.toString();
      const m = /(?:ready|listening|gateway)[^\n]*?(http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        ok(m[1]);
      }
    };
    child.stdout!.on('data', on);
    child.stderr!.on('data', on);
    child.on('exit', (c) => fail(new Error(`mlfaas up exited ${c}:\n${out.slice(-2000)}`)));
  });
  child.stderr!.on('data', (b: Buffer) => {
    for (const l of b.toString().split('\n')) if (/error|fail/i.test(l)) log(`  [up] ${l}`);
  });
  const redis = connectRedis(embedded.url);
  return {
    url,
    redis,
    async stop() {
      child.kill('SIGTERM');
      await new Promise<void>((r) => {
        const t = setTimeout(() => {
          child.kill('SIGKILL');
          r();
        }, 50_000);
        child.once('exit', () => {
          clearTimeout(t);
          r();
        });
      });
      redis.disconnect();
      await embedded.stop();
    },
  };
}

const NODE_CORES = cpus().map((_, i) => i);

/**
 * One sample of a function's replicas: every replica the provider lists (starting ones too: a cold
 * start is paid), its cores from the autoscaler's placement (an unplaced replica may use every
 * core) and its quota from the autoscaler's replica settings (default 1).
 */
export async function sampleReplicas(redis: Redis, name: string): Promise<Sample> {
  const ref = { name, namespace: DEFAULT_NAMESPACE };
  const t = Date.now();
  const [reps, settings, book] = await Promise.all([
    redis.hgetall(keys.replicas(ref)),
    redis.hgetall(replicaSettingsKey(ref)),
    redis.hgetall(`mlfaas:autoscaler:placements:${refKey(ref)}`),
  ]);
  return {
    t,
    replicas: Object.keys(reps).map((id) => {
      const s = settings[id] ? (JSON.parse(settings[id]) as { quota?: number }) : {};
      const spot = book[id] ? (JSON.parse(book[id]) as { gpu?: string }) : {};
      return { id, cores: coresOfDevice(spot.gpu, NODE_CORES).length, quota: s.quota ?? 1, ...(spot.gpu ? { device: spot.gpu } : {}) };
    }),
  };
}

/**
 * The function's capability profile once the platform has its final one (measured, or predicted
 * relative to a measured point; not the graph-only first stage), bounded wait.
 */
export async function waitProfile(url: string, name: string, timeoutMs: number): Promise<CapabilityProfile | undefined> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    const p = await profileNow(url, name);
    if (p && p.source !== 'predicted') return p;
    await new Promise((ok) => setTimeout(ok, 1000));
  }
  return undefined;
}

/** The function's capability profile as the gateway answers it now (any stage), or undefined. */
export async function profileNow(url: string, name: string): Promise<CapabilityProfile | undefined> {
  const r = await request(`${url}/system/capability?function=${name}`).catch(() => undefined);
  if (r?.statusCode !== 200) {
    await r?.body.dump();
    return undefined;
  }
  return (await r.body.json()) as CapabilityProfile;
}
