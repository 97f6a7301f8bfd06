/**
 * npm run bench:gateway — what the gateway adds on top of a replica.
 *
 * Starts the platform as a child process (`mlfaas up` with bench/gateway-stack.yml, its own
 * redis-server), then runs autocannon in this process against the replica directly and against
 * /function/<name>, same payload, same run: latency at 1 connection (added p50/p99) and
 * throughput at 64 connections (ratio). digits-classify is also asked through the Open Inference
 * Protocol, `/v2/models/<name>/infer` on the replica and on the gateway, in the same run (issue 25).
 * Prints a table, appends it to bench/results/gateway.md, and ends with
 * `gateway: p50_added_ms=<x> p99_added_ms=<y> throughput_ratio=<z> v2_p50_added_ms=<a> v2_throughput_ratio=<b>`.
 */
import autocannon from 'autocannon';
import { ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type Redis from 'ioredis';
import { connectRedis } from '../gateway/lib/redis-server';
import { sequentialLatencies, quantile } from './lib/latency';
import { appendResults, table } from './lib/results';

const ROOT = join(__dirname, '..');
const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 8);
const FN = 'digits-classify';
/** Whether each measured replica ran sandboxed (its socket is the sandbox relay's): the table header says which. */
const replicasSeen: boolean[] = [];

interface Run {
  rps: number;
  p50: number;
  p99: number;
  bad: number;
}

function cannon(url: string, connections: number, body: string, socketPath?: string): Promise<Run> {
  return new Promise((resolve, reject) => {
    autocannon(
      { url, connections, duration: DURATION_S, method: 'POST', body, headers: { 'content-type': 'application/json' }, ...(socketPath ? { socketPath } : {}) },
      (err, r) => {
        if (err) return reject(err);
        resolve({ rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, bad: r.errors + r.non2xx });
      },
    );
  });
}

async function startPlatform(dataDir: string, port: number): Promise<ChildProcess> {
  const child = spawn(process.execPath, [join(ROOT, 'bin/mlfaas'), 'up', '-f', join(__dirname, 'gateway-stack.yml')], {
    env: { ...process.env, MLFAAS_DATA_DIR: dataDir, MLFAAS_PORT: String(port) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let log = '';
  child.stderr!.on('data', (b: Buffer) => (log += b.toString()));
  const deadline = Date.now() + 60_000;
  while (!/ready: http/.test(log)) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`platform did not start:\n${log}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return child;
}

async function startBaselineProxy(port: number, socket: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, [join(__dirname, 'baselines', 'minimal-proxy.js'), String(port), socket], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve) => child.stdout!.once('data', () => resolve()));
  return child;
}

interface FnResult {
  fn: string;
  p50Added: number;
  p99Added: number;
  ratio: number;
  baselineRatio: number;
  rows: Array<Array<string | number>>;
  /** The same through /v2/models/<name>/infer, when asked. */
  v2?: { p50Added: number; p99Added: number; ratio: number };
}

async function measure(fn: string, body: string, port: number, redis: Redis, v2Body?: string): Promise<FnResult> {
  const replicas = await redis.hgetall(`mlfaas:replicas:openfaas-fn/${fn}`);
  const replica = Object.values(replicas)
    .map((v) => JSON.parse(v) as { url: string; state: string; socket?: string })
    .find((r) => r.state === 'ready');
  if (!replica?.socket) throw new Error(`${fn}: no ready replica with a unix socket`);
  // a sandboxed replica's port is in its own network namespace: "direct" is then its socket on
  // the host (the sandbox relays it to the port), the way the gateway reaches it
  const sandboxed = /gateway\.sock$/.test(replica.socket);
  replicasSeen.push(sandboxed);
  const direct = sandboxed ? 'http://localhost/' : `${replica.url}/`;
  const directSocket = sandboxed ? replica.socket : undefined;
  const viaGw = `http://127.0.0.1:${port}/function/${fn}`;
  const proxyPort = port + 1;
  const proxy = await startBaselineProxy(proxyPort, replica.socket);
  const viaProxy = `http://127.0.0.1:${proxyPort}/`;
  try {
    await cannon(viaGw, 8, body); // warm-up: JIT, keep-alive pools
    await cannon(viaProxy, 8, body);
    const n = Number(process.env.BENCH_LATENCY_N ?? 3000);
    const ld = await sequentialLatencies(direct, body, n, directSocket);
    const lg = await sequentialLatencies(viaGw, body, n);
    const lp = await sequentialLatencies(viaProxy, body, n);
    const d = await cannon(direct, 64, body, directSocket);
    const g = await cannon(viaGw, 64, body);
    const p = await cannon(viaProxy, 64, body);
    const row = (name: string, lat: number[], r: Run, base = d) => [
      fn, name, quantile(lat, 0.5).toFixed(3), quantile(lat, 0.99).toFixed(3), Math.round(r.rps), (r.rps / base.rps).toFixed(3), r.p50, r.p99, r.bad,
    ];
    // the Open Inference Protocol: the same model, replica and gateway, at the same /v2 path
    let v2: FnResult['v2'];
    const v2Rows: Array<Array<string | number>> = [];
    if (v2Body) {
      const v2Path = `/v2/models/${fn}/infer`;
      const directV2 = sandboxed ? `http://localhost${v2Path}` : `${replica.url}${v2Path}`;
      const viaGwV2 = `http://127.0.0.1:${port}${v2Path}`;
      await cannon(viaGwV2, 8, v2Body); // warm-up
      const ldv = await sequentialLatencies(directV2, v2Body, n, directSocket);
      const lgv = await sequentialLatencies(viaGwV2, v2Body, n);
      const dv = await cannon(directV2, 64, v2Body, directSocket);
      const gv = await cannon(viaGwV2, 64, v2Body);
      v2 = { p50Added: quantile(lgv, 0.5) - quantile(ldv, 0.5), p99Added: quantile(lgv, 0.99) - quantile(ldv, 0.99), ratio: gv.rps / dv.rps };
      v2Rows.push(row('replica /v2 (direct; ratio base)', ldv, dv, dv), row('mlfaas gateway /v2/models/…/infer', lgv, gv, dv));
    }
    return {
      v2,
      fn,
      p50Added: quantile(lg, 0.5) - quantile(ld, 0.5),
      p99Added: quantile(lg, 0.99) - quantile(ld, 0.99),
      ratio: g.rps / d.rps,
      baselineRatio: p.rps / d.rps,
      rows: [row(sandboxed ? 'replica (direct, through its sandbox socket)' : 'replica (direct)', ld, d), row('mlfaas gateway /function', lg, g),
        row('baseline: minimal Node proxy', lp, p), ...v2Rows],
    };
  } finally {
    proxy.kill();
  }
}

async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'mlfaas-bench-'));
  const port = 18000 + Math.floor(Math.random() * 1000);
  const platform = await startPlatform(dataDir, port);
  const redis = connectRedis(join(dataDir, 'redis', 'redis.sock'));
  try {
    const dir = join(ROOT, 'functions', 'digits-classify');
    const digits = await measure(FN, readFileSync(join(dir, 'digit.json'), 'utf8'), port, redis, readFileSync(join(dir, 'v2-request.json'), 'utf8'));
    const image = await measure('image-classify', '{"random":1}', port, redis);
    const t = table(
      ['function', 'target', 'p50 ms (1 conn)', 'p99 ms (1 conn)', 'req/s (64 conn)', 'ratio vs direct', 'p50 ms (64)', 'p99 ms (64)', 'errors+non-2xx'],
      [...digits.rows, ...image.rows],
    );
    const line = (r: FnResult) =>
      `${r.fn}: added p50 ${r.p50Added.toFixed(3)} ms, added p99 ${r.p99Added.toFixed(3)} ms (1 connection, sequential); throughput ` +
      `ratio ${r.ratio.toFixed(3)} (64 connections; minimal-proxy baseline ${r.baselineRatio.toFixed(3)})` +
      (r.v2 ? `; /v2: added p50 ${r.v2.p50Added.toFixed(3)} ms, added p99 ${r.v2.p99Added.toFixed(3)} ms, throughput ratio ${r.v2.ratio.toFixed(3)} ` +
        '(gateway /v2 vs replica /v2)' : '');
    const load = loadavg().map((x) => x.toFixed(2)).join(' ');
    const env = `load average at the end ${load}; ${DURATION_S} s autocannon runs at 64 connections ` +
      `and ${process.env.BENCH_LATENCY_N ?? 3000} sequential requests per latency row; load generator in the bench process, platform and ` +
      `baseline proxy in child processes; ${cpus().length} cores (${cpus()[0]?.model ?? '?'}); gateway → replica over a unix socket ` +
      `(MLFAAS_ISOLATION=${process.env.MLFAAS_ISOLATION ?? 'auto'}: ${replicasSeen.every((x) => x)
        ? 'sandboxed replicas, reached through the sandbox relay'
        : 'plain child processes, not sandboxed (isolation off, or no sandbox binary: `npm run build:native`)'}). Command: \`npm run bench:gateway\``;
    console.log(t);
    console.log(line(digits));
    console.log(line(image));
    appendResults('gateway', 'Gateway overhead (bench:gateway)', `${env}\n\n${t}\n\n- ${line(digits)}\n- ${line(image)}`);
    const v2 = digits.v2 ? ` v2_p50_added_ms=${digits.v2.p50Added.toFixed(3)} v2_throughput_ratio=${digits.v2.ratio.toFixed(3)}` : '';
    const summary = `p50_added_ms=${digits.p50Added.toFixed(3)} p99_added_ms=${digits.p99Added.toFixed(3)} throughput_ratio=${digits.ratio.toFixed(3)}`;
    console.log(`gateway: ${summary}${v2}`);
  } finally {
    redis.disconnect();
    platform.kill('SIGTERM');
    await new Promise((r) => platform.once('exit', r));
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
