import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { isAlive } from '../../gateway/lib/process';
import {
  FunctionProcess, freePort, getJson, layoutImage, nodeModules, post, removeImage, repoRoot, startFunction, waitFor200,
} from './image-layout';

const digit = JSON.parse(fs.readFileSync(path.join(repoRoot, 'functions', 'digits-classify', 'digit.json'), 'utf8'));
const digitLabel = String(JSON.parse(
  fs.readFileSync(path.join(repoRoot, 'functions/digits-classify/metrics.json'), 'utf8'),
).digitJson.label);

async function boot(env: Record<string, string> = {}): Promise<{ fn: FunctionProcess; base: string; dir: string }> {
  const dir = layoutImage('ml-inference', 'functions/digits-classify', ['data']);
  const port = await freePort();
  const fn = startFunction(dir, { PORT: String(port), ...env });
  const base = `http://127.0.0.1:${port}`;
  await waitFor200(`${base}/_/health`, 10_000);
  return { fn, base, dir };
}

describe('ml-inference runtime serving digits-classify', () => {
  let fn: FunctionProcess;
  let base: string;
  let dir: string;

  beforeAll(async () => {
    ({ fn, base, dir } = await boot({ MAX_BATCH_SIZE: '8' }));
    await waitFor200(`${base}/_/ready`, 10_000);
  });
  afterAll(() => {
    fn.kill();
    removeImage(dir);
  });

  test('announces its port and readiness on stdout', async () => {
    const ready = fn.json().find((l) => l.type === 'ready');
    expect(ready).toMatchObject({ input: 'pixels', shape: ['batch', 64], maxBatchSize: 8, tokenGate: 'none', handler: true });
    expect(fn.json().find((l) => l.type === 'listening').port).toBe(Number(new URL(base).port));
  });

  test('digit.json is classified correctly', async () => {
    const r = await post(`${base}/function/digits-classify`, digit);
    expect(r.status).toBe(200);
    expect(r.body.predictions).toHaveLength(1);
    expect(r.body.predictions[0].label).toBe(digitLabel);
    expect(r.body.predictions[0].probability).toBeGreaterThan(0.5);
    expect(Number(r.headers.get('x-batch-size'))).toBe(1);
    expect(Number(r.headers.get('x-batch-latency-ms'))).toBeGreaterThan(0);
  });

  test.each([
    { name: 'data: one flat instance', body: { data: digit.instances[0] } },
    { name: 'bare array of instances', body: digit.instances },
    { name: 'bare flat array', body: digit.instances[0] },
    { name: '8x8 grid', body: { instances: [chunk(digit.instances[0], 8)] } },
  ])('accepts $name', async ({ body }) => {
    const r = await post(base, body);
    expect(r.status).toBe(200);
    expect(r.body.predictions[0].label).toBe(digitLabel);
  });

  test('a request with more instances than MAX_BATCH_SIZE is split and answered in order', async () => {
    const instances = Array.from({ length: 20 }, () => digit.instances[0]);
    const r = await post(base, { instances });
    expect(r.status).toBe(200);
    expect(r.body.predictions).toHaveLength(20);
    expect(new Set(r.body.predictions.map((p: any) => p.label))).toEqual(new Set([digitLabel]));
    expect(Number(r.headers.get('x-batch-size'))).toBeLessThanOrEqual(8);
  });

  test('32 concurrent requests are batched', async () => {
    // With BATCH_TIMEOUT_MS=0 a batch forms from whatever queued while the previous one ran;
    // a digits batch takes ~0.2 ms, so on a loaded machine one burst may not overlap. Up to 5 bursts.
    const sizes: number[] = [];
    for (let burst = 0; burst < 5 && Math.max(0, ...sizes) <= 1; burst++) {
      const replies = await Promise.all(Array.from({ length: 32 }, () => post(base, digit)));
      for (const r of replies) {
        expect(r.status).toBe(200);
        expect(r.body.predictions[0].label).toBe(digitLabel);
        sizes.push(Number(r.headers.get('x-batch-size')));
      }
    }
    expect(Math.max(...sizes)).toBeGreaterThan(1);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(8);
  });

  test.each([
    { name: 'invalid JSON', body: '{"instances": [', want: /not valid JSON/ },
    { name: 'wrong length', body: { instances: [[1, 2, 3]] }, want: /has 3 values.*'pixels' takes 64/ },
    { name: 'not a number', body: { data: [...digit.instances[0].slice(0, 63), 'x'] }, want: /value 63 is not a finite number/ },
    { name: 'empty instances', body: { instances: [] }, want: /empty/ },
    { name: 'no instances field', body: { foo: 1 }, want: /want a JSON body/ },
    { name: 'a 7x8 grid', body: { instances: [chunk(digit.instances[0], 8).slice(0, 7)] }, want: /not 8x8/ },
  ])('400 bad_input for $name', async ({ body, want }) => {
    const r = await post(base, body);
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('bad_input');
    expect(r.body.error.message).toMatch(want);
  });

  test('/_/stats reports counts and latencies', async () => {
    await post(base, digit);
    const stats = await getJson(`${base}/_/stats`);
    expect(stats.batches).toBeGreaterThan(0);
    expect(stats.requests).toBeGreaterThan(stats.batches - 1);
    expect(stats.meanBatchSize).toBeGreaterThanOrEqual(1);
    expect(stats.lastBatchSize).toBe(1);
    expect(stats.batchLatencyMs.p50).toBeGreaterThan(0);
    expect(stats.batchLatencyMs.p99).toBeGreaterThanOrEqual(stats.batchLatencyMs.p50);
    expect(stats.queueLength).toBe(0);
    expect(stats.ready).toBe(true);
  });

  test('GET / describes the model; DELETE is 405', async () => {
    const info = await getJson(base);
    expect(info.model).toEqual({ input: 'pixels', shape: ['batch', 64], outputs: ['probabilities'] });
    const r = await fetch(base, { method: 'DELETE' });
    expect(r.status).toBe(405);
  });
});

describe('ml-inference runtime lifecycle', () => {
  test('SIGTERM drains queued requests and exits 0', async () => {
    // A 300 ms batch window keeps requests queued when SIGTERM arrives.
    const { fn, base, dir } = await boot({ BATCH_TIMEOUT_MS: '300', MAX_BATCH_SIZE: '64' });
    try {
      await waitFor200(`${base}/_/ready`, 10_000);
      const pending = Array.from({ length: 5 }, () => post(base, digit));
      const deadline = Date.now() + 5000;
      while (Date.now() < deadline) {
        const s = await getJson(`${base}/_/stats`);
        if (s.queueLength === 5) break;
        await new Promise((r) => setTimeout(r, 10));
      }
      const t0 = Date.now();
      fn.child.kill('SIGTERM');
      const replies = await Promise.all(pending);
      for (const r of replies) {
        expect(r.status).toBe(200);
        expect(r.body.predictions[0].label).toBe(digitLabel);
        expect(Number(r.headers.get('x-batch-size'))).toBe(5);
      }
      const { code } = await fn.exited;
      expect(code).toBe(0);
      expect(Date.now() - t0).toBeLessThan(10_000);
      await expect(fetch(`${base}/_/health`)).rejects.toThrow();
    } finally {
      fn.kill();
      removeImage(dir);
    }
  });

  test('a model that is not there fails at start with a message', async () => {
    const dir = layoutImage('ml-inference', 'functions/digits-classify', ['data']);
    const fn = startFunction(dir, { PORT: String(await freePort()), MODEL_PATH: 'missing.onnx' });
    try {
      const { code } = await fn.exited;
      expect(code).toBe(1);
      expect(fn.stderr).toMatch(/missing\.onnx/);
    } finally {
      fn.kill();
      removeImage(dir);
    }
  });
});

describe('ml-inference parent watch', () => {
  test('exits by itself when its parent process dies', async () => {
    const dir = layoutImage('ml-inference', 'functions/digits-classify', ['data']);
    const port = await freePort();
    // The shell starts the runtime, prints its pid and lives one more second.
    const sh = startShell(`node index.js > out.log 2>&1 & echo $!; sleep 1`, dir, port);
    try {
      const pid = Number(await sh.pid);
      const base = `http://127.0.0.1:${port}`;
      await waitFor200(`${base}/_/health`, 10_000);
      const deadline = Date.now() + 8000;
      while (Date.now() < deadline && isAlive(pid)) await new Promise((r) => setTimeout(r, 100));
      expect(isAlive(pid)).toBe(false);
      expect(fs.readFileSync(path.join(dir, 'out.log'), 'utf8')).toMatch(/parent process exited: draining/);
    } finally {
      removeImage(dir);
    }
  });
});

function startShell(script: string, cwd: string, port: number): { pid: Promise<string> } {
  const child = spawn('sh', ['-c', script], {
    cwd, env: { PATH: process.env.PATH ?? '', NODE_PATH: nodeModules, HOST: '127.0.0.1', PORT: String(port) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return { pid: new Promise((resolve) => child.stdout.once('data', (d: Buffer) => resolve(d.toString().trim()))) };
}

describe('ml-inference token gate', () => {
  test('tokens.js, when the image has one, is asked before and told after every batch', async () => {
    const dir = layoutImage('ml-inference', 'functions/digits-classify', ['data']);
    const log = path.join(dir, 'gate.log');
    // A stand-in for the platform's client: it records calls and grants at once.
    fs.writeFileSync(path.join(dir, 'tokens.js'), `
      const fs = require('node:fs');
      exports.createTokenGate = (opts) => {
        fs.appendFileSync(${JSON.stringify(log)}, JSON.stringify({ create: opts }) + '\\n');
        return {
          acquire: async (ms) => fs.appendFileSync(${JSON.stringify(log)}, JSON.stringify({ acquire: ms }) + '\\n'),
          release: (ms) => fs.appendFileSync(${JSON.stringify(log)}, JSON.stringify({ release: ms }) + '\\n'),
        };
      };`);
    const port = await freePort();
    const fn = startFunction(dir, { PORT: String(port), MLFAAS_TOKEND_SOCKET: '/tmp/none.sock' });
    try {
      const base = `http://127.0.0.1:${port}`;
      await waitFor200(`${base}/_/ready`, 10_000);
      for (let i = 0; i < 3; i++) expect((await post(base, digit)).status).toBe(200);
      const calls = fs.readFileSync(log, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
      expect(calls[0]).toEqual({ create: { socketPath: '/tmp/none.sock', device: 'cpu' } });
      const seq = calls.slice(1).map((c) => Object.keys(c)[0]);
      expect(seq).toEqual(['acquire', 'release', 'acquire', 'release', 'acquire', 'release']);
      expect(calls[1].acquire).toBe(0); // nothing measured yet for a batch of 1
      expect(calls[3].acquire).toBeCloseTo(calls[2].release, 6); // then the moving average
      expect(fn.json().find((l) => l.type === 'ready').tokenGate).toBe('tokens');
    } finally {
      fn.kill();
      removeImage(dir);
    }
  });
});

function chunk<T>(a: T[], n: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < a.length; i += n) out.push(a.slice(i, i + n));
  return out;
}
