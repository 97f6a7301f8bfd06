/**
 * What a user does after `npm start`: the platform with the example functions from stack.yml,
 * a real prediction for digit.json, scale from zero for the heavier model, Ctrl-C stops every
 * process it started.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventually } from '../helpers/platform';
import { passwordFile } from '../../gateway/auth-credentials';
import { connectRedis } from '../../gateway/lib/redis-server';
import { isAlive } from '../../gateway/lib/process';

const ROOT = join(__dirname, '../..');

it('mlfaas up: builds and deploys stack.yml, serves real predictions, and Ctrl-C stops everything', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'mlfaas-up-'));
  const port = 19000 + Math.floor(Math.random() * 500);
  const child = spawn(process.execPath, [join(ROOT, 'bin/mlfaas'), 'up'], {
    cwd: ROOT,
    env: { ...process.env, MLFAAS_DATA_DIR: dataDir, MLFAAS_PORT: String(port) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let log = '';
  child.stderr!.on('data', (b: Buffer) => (log += b.toString()));
  const base = `http://127.0.0.1:${port}`;
  try {
    expect(await eventually(() => /ready: http/.test(log), 60000, 100)).toBe(true);
    // faas-cli list view
    // secure by default: a generated password, saved in the data dir; stderr is a pipe here
    // (as with `npm start > log`), so the log names the file and never holds the password
    expect((await fetch(`${base}/system/functions`)).status).toBe(401);
    const password = readFileSync(passwordFile(dataDir), 'utf8').trim();
    expect(log).not.toContain(password);
    expect(log).toContain('not printed: stderr is not a terminal');
    expect(log).toMatch(/faas-cli login --username admin --password-stdin/);
    const auth = { authorization: 'Basic ' + Buffer.from(`admin:${password}`).toString('base64') };
    const list = (await (await fetch(`${base}/system/functions`,
      { headers: auth })).json()) as Array<{ name: string; replicas: number; availableReplicas: number }>;
    expect(list.map((f) => f.name).sort()).toEqual(['digits-classify', 'digits-train', 'image-classify', 'resnet-torch', 'text-encoder']);
    expect(list.find((f) => f.name === 'digits-classify')).toEqual(expect.objectContaining({ replicas: 1, availableReplicas: 1 }));
    expect(list.find((f) => f.name === 'image-classify')!.replicas).toBe(0);
    // curl -d @functions/digits-classify/digit.json .../function/digits-classify
    const res = await fetch(`${base}/function/digits-classify`,
      { method: 'POST', body: readFileSync(join(ROOT, 'functions', 'digits-classify', 'digit.json')) });
    expect(res.status).toBe(200);
    const pred = (await res.json()) as { predictions: Array<{ label: string; probability: number }> };
    expect(pred.predictions[0].label).toBe('7');
    expect(pred.predictions[0].probability).toBeGreaterThan(0.9);
    // the heavier model wakes from zero
    const img = await fetch(`${base}/function/image-classify`, { method: 'POST', body: '{"random":2}' });
    expect(img.status).toBe(200);
    expect(((await img.json()) as { predictions: unknown[] }).predictions).toHaveLength(2);
    // the PyTorch example (ml-inference-torch) wakes from zero and answers both protocols
    const pixels = new Array(3 * 224 * 224).fill(0.1);
    const torchV1 = await fetch(`${base}/function/resnet-torch`, { method: 'POST', body: JSON.stringify({ instances: [pixels] }) });
    expect(torchV1.status).toBe(200);
    expect(((await torchV1.json()) as { predictions: Array<{ label: string }> }).predictions[0].label).toEqual(expect.any(String));
    const torchV2 = await fetch(`${base}/v2/models/resnet-torch/infer`,
      { method: 'POST', body: JSON.stringify({ inputs: [{ name: 'image', shape: [1, 3, 224, 224], datatype: 'FP32', data: pixels }] }) });
    expect(torchV2.status).toBe(200);
    expect(((await torchV2.json()) as { outputs: Array<{ shape: number[] }> }).outputs[0].shape).toEqual([1, 1000]);
    // any ONNX model (issue 25): the int64 [batch, seq] text encoder wakes from zero; its handler tokenizes
    const text = await fetch(`${base}/function/text-encoder`, { method: 'POST', body: '{"text":"the movie was not good"}' });
    expect(text.status).toBe(200);
    expect(((await text.json()) as { predictions: Array<{ label: string }> }).predictions[0].label).toBe('negative');
    // a training function does not serve invocations
    expect((await fetch(`${base}/function/digits-train`, { method: 'POST', body: '{}' })).status).toBe(400);
    const redis = connectRedis(join(dataDir, 'redis', 'redis.sock'));
    const pids: number[] = [Number(readFileSync(join(dataDir, 'redis', 'redis.pid'), 'utf8'))];
    for (const k of await redis.keys('mlfaas:replicas:*')) {
      for (const v of Object.values(await redis.hgetall(k))) pids.push((JSON.parse(v) as { pid: number }).pid);
    }
    redis.disconnect();
    expect(pids.length).toBeGreaterThanOrEqual(3);
    expect(readdirSync(join(dataDir, 'images')).length).toBe(5);
    // Ctrl-C
    child.kill('SIGINT');
    const code = await new Promise<number | null>((r) => child.once('exit', r));
    expect(code).toBe(0);
    expect(await eventually(() => pids.every((p) => !isAlive(p)), 10000)).toBe(true);
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  }
}, 120000);
