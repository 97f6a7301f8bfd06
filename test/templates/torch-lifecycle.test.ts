/**
 * The ml-inference-torch runtime's lifecycle and limits as a real child process: SIGTERM drain,
 * per-function timeouts (read_timeout / write_timeout / exec_timeout, Go durations), the token
 * gate against a real tokend (and failing open without one), TorchScript and torch.export models.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { createTokendControl } from '../../node-runtime/tokend-control';
import { startTokend } from '../../node-runtime/tokend-process';
import { isAlive } from '../../gateway/lib/process';
import { FunctionProcess, getJson } from './image-layout';
import { TINY_HANDLER, TORCH_PYTHON, TorchFunction, layoutTorchImage, pythonJson, send, startTorch } from './torch-helpers';
import { make } from '../native/helpers';

const one = (i = 1) => ({
  inputs: [{ name: 'x', shape: [1, 4], datatype: 'FP32', data: [i, 2, 3, 4] }, { name: 'k', shape: [1, 2], datatype: 'INT64', data: [i, 1] }],
});
const v1One = (i = 1) => ({ instances: [{ x: [i, 2, 3, 4], k: [i, 1] }] });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(what: string, cond: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (await cond()) return;
    await sleep(20);
  }
  throw new Error(`${what}: not within ${timeoutMs} ms`);
}

describe('ml-inference-torch lifecycle', () => {
  test('SIGTERM drains queued requests, answers them all and exits 0', async () => {
    const t = await startTorch(layoutTorchImage({ 'handler.py': TINY_HANDLER }), { BATCH_TIMEOUT_MS: '20000', MAX_BATCH_SIZE: '64' });
    try {
      const pending = [1, 2, 3].map((i) => send(`${t.base}/v2/models/tiny/infer`, one(i)));
      await until('3 queued', async () => (await getJson(`${t.base}/_/stats`)).queueLength === 3);
      t.fn.child.kill('SIGTERM');
      const replies = await Promise.all(pending);
      expect(replies.map((r) => r.status)).toEqual([200, 200, 200]);
      expect(replies.map((r) => r.headers.get('x-batch-size'))).toEqual(['3', '3', '3']);
      expect(await t.fn.exited).toEqual({ code: 0, signal: null });
      expect(t.fn.stderr).toMatch(/SIGTERM: draining \(3 queued\)[\s\S]*drained; exiting/);
    } finally {
      t.stop();
    }
  }, 90_000);

  test.each<{ name: string; env: Record<string, string> }>([
    { name: 'exec_timeout', env: { exec_timeout: '300ms' } },
    { name: 'write_timeout', env: { write_timeout: '0.3s' } },
  ])('$name: a request past it answers 504 (v1 and v2), is counted, and a queued one is dropped', async ({ env }) => {
    const t = await startTorch(layoutTorchImage({ 'handler.py': TINY_HANDLER }), { SLOW_MS: '1500', MAX_BATCH_SIZE: '1', ...env });
    try {
      const [a, b] = await Promise.all([send(`${t.base}/v2/models/tiny/infer`, one(1)), send(`${t.base}/function/tiny`, v1One(2))]);
      expect(a.status).toBe(504);
      expect(a.body.error).toMatch(/exec_timeout\/write_timeout/);
      expect(b.status).toBe(504);
      expect(b.body.error).toMatchObject({ code: 'timeout' });
      await until('the running batch ends', async () => (await getJson(`${t.base}/_/stats`)).inFlightBatch === 0);
      await sleep(300);
      const stats = await getJson(`${t.base}/_/stats`);
      // MAX_BATCH_SIZE 1: two runs had the queued request not been dropped (on a starved host both may be dropped)
      expect(stats.batches).toBeLessThanOrEqual(1);
      expect(stats).toMatchObject({ timeouts: 2, errors: 0, queueLength: 0 });
    } finally {
      t.stop();
    }
  }, 90_000);

  test('read_timeout: a body that does not arrive in time answers 408', async () => {
    const t = await startTorch(layoutTorchImage({ 'handler.py': TINY_HANDLER }), { read_timeout: '500ms' }, false);
    try {
      const answer = await new Promise<string>((resolve, reject) => {
        const s = net.connect(Number(new URL(t.base).port), '127.0.0.1', () => {
          s.write('POST /function/tiny HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"instances":');
        });
        let got = '';
        s.on('data', (c) => { got += c.toString(); });
        s.on('close', () => resolve(got));
        s.on('error', reject);
        setTimeout(() => { s.destroy(); resolve(got); }, 15_000);
      });
      expect(answer).toMatch(/^HTTP\/1\.1 408/);
      expect(answer).toMatch(/read_timeout/);
    } finally {
      t.stop();
    }
  }, 60_000);

  test('answers /_/health before torch is loaded, and drains and exits when its parent dies', async () => {
    const dir = layoutTorchImage({ 'handler.py': TINY_HANDLER });
    // the runtime's parent is this shell; SIGKILL to it changes the runtime's ppid
    const parent = spawn('sh', ['-c', 'sh start.sh & wait'], {
      cwd: dir, env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', PORT: '0', MLFAAS_PYTHON: TORCH_PYTHON }, stdio: ['ignore', 'pipe', 'pipe'],
    });
    const fn = new FunctionProcess(parent);
    let pid = 0;
    try {
      const listening = JSON.parse(await fn.waitForLine((l) => l.includes('"listening"'), 30_000));
      pid = listening.pid;
      const base = `http://127.0.0.1:${listening.port}`;
      expect(await getJson(`${base}/_/health`)).toEqual({ status: 'ok' });
      await fn.waitForLine((l) => l.includes('"ready"'), 60_000);
      expect((await fetch(`${base}/_/ready`)).status).toBe(200);
      parent.kill('SIGKILL');
      await until('the runtime exits', async () => !isAlive(pid), 20_000);
    } finally {
      if (pid && isAlive(pid)) process.kill(pid, 'SIGKILL');
      fn.kill();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 90_000);

  test('a malformed timeout is refused at start, naming the variable', async () => {
    await expect(startTorch(layoutTorchImage({ 'handler.py': TINY_HANDLER }), { exec_timeout: '10 parsecs' }, false)).rejects.toThrow(
      /exec_timeout='10 parsecs': want a Go duration/,
    );
  }, 60_000);
});

describe('ml-inference-torch token gate', () => {
  beforeAll(() => make('all'));

  test('against a real tokend: every batch acquires and reports, and a small quota makes batches wait', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tt-'));
    const tokend = await startTokend({ dir, windowMs: 20 });
    const t = await startTorch(layoutTorchImage({ 'handler.py': TINY_HANDLER }), { MLFAAS_TOKEND_SOCKET: tokend.socketPath, SLOW_MS: '30' });
    try {
      expect(t.ready.tokenGate).toBe('tokens');
      const pid = t.fn.json().find((l) => l.type === 'listening').pid;
      const ctl = createTokendControl(tokend.controlPath);
      await until('tokend sees the replica', async () => (await ctl.stats()).clients.some((c) => c.pid === pid && c.device === 'cpu'));
      expect((await ctl.setQuota({ pid, device: 'cpu', request: 0.05, limit: 0.05 })).applied).toBe(1);
      for (let i = 0; i < 3; i++) expect((await send(`${t.base}/v2/models/tiny/infer`, one(i))).status).toBe(200);
      const gate = (await getJson(`${t.base}/_/stats`)).tokenGate;
      expect(gate).toMatchObject({ enabled: true, connected: true, acquired: 3 });
      expect(gate.grants).toBeGreaterThan(0);
      expect(gate.waited).toBeGreaterThanOrEqual(1); // 30 ms batches on 1 ms per 20 ms window overdraw
      await until('tokend counts the batches', async () => {
        const c = (await ctl.stats()).clients.find((x) => x.pid === pid);
        return !!c && c.launches >= 3 && c.usedNs > 0;
      });
    } finally {
      t.stop();
      await tokend.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 90_000);

  test('fails open when tokend is unreachable', async () => {
    const t = await startTorch(layoutTorchImage({ 'handler.py': TINY_HANDLER }), { MLFAAS_TOKEND_SOCKET: '/tmp/mlfaas-no-tokend-here.sock' });
    try {
      expect((await send(`${t.base}/v2/models/tiny/infer`, one())).status).toBe(200);
      expect((await getJson(`${t.base}/_/stats`)).tokenGate).toMatchObject({ enabled: true, connected: false, open: true, acquired: 1 });
    } finally {
      t.stop();
    }
  }, 60_000);
});

describe('ml-inference-torch model files', () => {
  let t: TorchFunction | undefined;
  afterAll(() => t?.stop());

  test('a TorchScript model.pt with signature.json and labels.json: v1 argmax label and v2 equal torch\'s own output', async () => {
    const dir = layoutTorchImage({
      'signature.json': JSON.stringify({ inputs: [{ name: 'features', datatype: 'FP32', shape: [-1, 3] }], outputs: ['scores'] }),
      'labels.json': JSON.stringify(['cat', 'dog', 'bird']),
    });
    const fdir = path.join(dir, 'function');
    const want = pythonJson(`
import json, torch
torch.manual_seed(1)
m = torch.jit.script(torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.Softmax(dim=-1)).eval())
m.save('model.pt')
x = torch.tensor([[1.0, -2.0, 0.5], [0.0, 3.0, 1.0]])
print(json.dumps(m(x).tolist()))
`, fdir);
    t = await startTorch(dir);
    expect(t.ready).toMatchObject({ input: 'features', shape: ['batch', 3], outputs: ['scores'], source: 'TorchScript model.pt' });
    const v2 = await send(`${t.base}/v2/models/ts/infer`, { inputs: [{ name: 'features', shape: [2, 3], datatype: 'FP32', data: [1, -2, 0.5, 0, 3, 1] }] });
    expect(v2.status).toBe(200);
    const got = v2.body.outputs[0].data as number[];
    want.flat().forEach((w: number, i: number) => expect(got[i]).toBeCloseTo(w, 6));
    const v1 = await send(`${t.base}/`, { instances: [[1, -2, 0.5], [0, 3, 1]] });
    expect(v1.status).toBe(200);
    const labels = ['cat', 'dog', 'bird'];
    expect(v1.body.predictions.map((p: any) => p.label)).toEqual(want.map((row: number[]) => labels[row.indexOf(Math.max(...row))]));
    expect(v1.body.predictions[0].score).toBeCloseTo(Math.max(...want[0]), 6);
  }, 120_000);

  test.each<{ name: string; files: Record<string, string | Buffer>; zip: boolean; want: RegExp }>([
    {
      name: 'a torch.export program on torch < 2.1 is refused with the reason',
      files: { 'model.pt2': Buffer.from('PK\u0005\u0006' + '\u0000'.repeat(18), 'binary') },
      zip: true,
      want: /torch\.export program: it needs torch >= 2\.1, and this runtime has torch 1\./,
    },
    { name: 'no model at all', files: { 'README.md': 'nothing' }, zip: false, want: /no model: want .*model\.pt or .*model\.pt2/ },
  ])('$name', async ({ files, zip, want }) => {
    const dir = layoutTorchImage(files);
    if (zip) {
      // a real zip holding what torch.export.save writes, made with Python's zipfile
      pythonJson(`
import json, zipfile
with zipfile.ZipFile('model.pt2', 'w') as z:
    z.writestr('model/serialized_exported_program.json', '{}')
print('{}')`, path.join(dir, 'function'));
      const version = pythonJson('import json, torch; print(json.dumps(torch.__version__))');
      if (!/^1\.|^2\.0/.test(version)) return; // torch >= 2.1 loads it: nothing to refuse
    }
    const f = await startTorch(dir, {}, false);
    try {
      const { code } = await f.fn.exited;
      expect(code).toBe(1);
      expect(f.fn.stderr).toMatch(want);
    } finally {
      f.stop();
    }
  }, 60_000);
});
