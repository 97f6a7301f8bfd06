/**
 * Test helpers for the ml-inference-torch runtime: lay out an image (the template's files at the
 * root, a handler folder in function/), start its fprocess (`sh start.sh`, which picks the Python
 * that has torch), and wait for its JSON stdout lines.
 */
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { FunctionProcess, repoRoot } from './image-layout';

export const TORCH_PYTHON = process.env.MLFAAS_PYTHON || (fs.existsSync('/opt/torch/.venv/bin/python3') ? '/opt/torch/.venv/bin/python3' : '/usr/bin/python3');

/** A fast model with two inputs and three outputs of other datatypes; SLOW_MS makes forward() sleep; an x of 13 makes it raise. */
export const TINY_HANDLER = `
import os, time, torch
inputs = [{'name': 'x', 'datatype': 'FP32', 'shape': [-1, 4]}, {'name': 'k', 'datatype': 'INT64', 'shape': [-1, 2]}]
outputs = [{'name': 'y'}, {'name': 'positive'}, {'name': 'ksum'}]
SLOW = float(os.environ.get('SLOW_MS', '0')) / 1000
class M(torch.nn.Module):
    def forward(self, x, k):
        if SLOW:
            time.sleep(SLOW)
        if bool((x == 13).any()):
            raise ValueError('13 is unlucky')
        w = torch.arange(1, 5, dtype=torch.float32)
        return {'y': x * w + k.sum(1, keepdim=True).float(), 'positive': x.sum(1) > 0, 'ksum': k.sum(1)}
def load():
    return M()
`;

/** What TINY_HANDLER's model answers for one row. */
export function tinyExpected(x: number[], k: number[]): { y: number[]; positive: boolean; ksum: number } {
  const ks = k[0] + k[1];
  return { y: x.map((v, j) => Math.fround(Math.fround(v * (j + 1)) + ks)), positive: x.reduce((a, b) => a + b, 0) > 0, ksum: ks };
}

/** A temp image dir: templates/ml-inference-torch minus function/, plus `files` (or a folder) in function/. */
export function layoutTorchImage(files: Record<string, string | Buffer> | string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mlfaas-torch-'));
  const tdir = path.join(repoRoot, 'templates', 'ml-inference-torch');
  for (const entry of fs.readdirSync(tdir)) {
    if (entry === 'function' || entry === '__pycache__') continue;
    fs.cpSync(path.join(tdir, entry), path.join(dir, entry), { recursive: true });
  }
  if (typeof files === 'string') fs.cpSync(path.join(repoRoot, files), path.join(dir, 'function'), { recursive: true });
  else {
    fs.mkdirSync(path.join(dir, 'function'));
    for (const [name, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, 'function', name), text);
  }
  return dir;
}

export interface TorchFunction {
  fn: FunctionProcess;
  base: string;
  dir: string;
  ready: any;
  stop(): void;
}

/** Start `sh start.sh` on PORT=0 and wait for the listening line (and the ready line unless `waitReady` is false). */
export async function startTorch(dir: string, env: Record<string, string> = {}, waitReady = true): Promise<TorchFunction> {
  const child = spawn('sh', ['start.sh'], {
    cwd: dir,
    env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', PORT: '0', REPORT_INTERVAL_MS: '0', MLFAAS_PYTHON: TORCH_PYTHON, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const fn = new FunctionProcess(child);
  const stop = () => {
    fn.kill();
    fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    const listening = JSON.parse(await fn.waitForLine((l) => l.includes('"listening"'), 30_000));
    const ready = waitReady ? JSON.parse(await fn.waitForLine((l) => l.includes('"ready"'), 60_000)) : null;
    return { fn, base: `http://127.0.0.1:${listening.port}`, dir, ready, stop };
  } catch (err) {
    stop();
    throw err;
  }
}

/** Run a Python snippet with torch; returns its stdout parsed as JSON. */
export function pythonJson(code: string, cwd?: string): any {
  const env = { ...process.env, PYTHONDONTWRITEBYTECODE: '1' }; // no __pycache__ in the repo's folders
  const r = spawnSync(TORCH_PYTHON, ['-c', code], { cwd, env, encoding: 'utf8', timeout: 120_000, maxBuffer: 64 << 20 });
  if (r.status !== 0) throw new Error(`python failed (${r.status}): ${r.stderr}`);
  return JSON.parse(r.stdout);
}

export async function send(url: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; headers: Headers; body: any }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...headers },
    body: typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: any = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    /* not JSON */
  }
  return { status: res.status, headers: res.headers, body: parsed };
}
