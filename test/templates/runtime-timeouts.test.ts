/**
 * Per-function timeouts in the ml-inference runtime (issue 25, part 5), as of-watchdog has them:
 * exec_timeout (504, counted), read_timeout (408), write_timeout (the connection is closed), and a
 * bad duration refusing to start. Mechanisms, not timings: a request is held in the queue by a long
 * BATCH_TIMEOUT_MS (the batcher waits that long for a lone request's batch to fill), so only
 * exec_timeout can answer it.
 */
import * as net from 'node:net';
import { EventEmitter } from 'node:events';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { sendRaw } from '../fixtures/v2/cases';
import { FunctionProcess, freePort, layoutImage, removeImage, repoRoot, startFunction, waitFor200 } from './image-layout';
// eslint-disable-next-line @typescript-eslint/no-var-requires
const { guardWrite } = require('../../templates/ml-inference/http-io');

const digit: number[] = JSON.parse(fs.readFileSync(path.join(repoRoot, 'functions/digits-classify/digit.json'), 'utf8')).instances[0];
const v2Body = (rows: number) => Buffer.from(JSON.stringify({
  inputs: [{ name: 'pixels', shape: [rows, 64], datatype: 'FP32', data: Array.from({ length: rows }, () => digit) }],
}));
const JSON_HEADERS = { 'Content-Type': 'application/json' };

async function boot(env: Record<string, string>): Promise<{ fn: FunctionProcess; dir: string; base: string; port: number }> {
  const dir = layoutImage('ml-inference', 'functions/digits-classify', ['data']);
  const port = await freePort();
  const fn = startFunction(dir, { PORT: String(port), ...env });
  return { fn, dir, base: `http://127.0.0.1:${port}`, port };
}

describe('exec_timeout and read_timeout on a running runtime', () => {
  let s: Awaited<ReturnType<typeof boot>>;
  beforeAll(async () => {
    s = await boot({ MAX_BATCH_SIZE: '8', BATCH_TIMEOUT_MS: '30000', exec_timeout: '3s', read_timeout: '400ms' });
    await waitFor200(`${s.base}/_/ready`, 30_000);
  }, 40_000);
  afterAll(() => {
    s.fn.kill();
    removeImage(s.dir);
  });

  test('the ready line reports the timeouts read from the environment', async () => {
    const line = await s.fn.waitForLine((l) => l.includes('"type":"ready"'), 10_000);
    expect(JSON.parse(line)).toMatchObject({ timeoutsMs: { read: 400, write: 0, exec: 3000 } });
  });

  test('a full batch runs at once and answers 200 within exec_timeout', async () => {
    const r = await sendRaw(s.base, 'POST', '/v2/models/digits-classify/infer', JSON_HEADERS, v2Body(8));
    expect(r.status).toBe(200);
    expect(r.headers['x-batch-size']).toBe('8');
  });

  test('a lone request held in the queue gets 504 in the v2 form on /v2, and the v1 form on /function', async () => {
    const [v2, v1] = await Promise.all([
      sendRaw(s.base, 'POST', '/v2/models/digits-classify/infer', JSON_HEADERS, v2Body(1)),
      sendRaw(s.base, 'POST', '/function/digits-classify', JSON_HEADERS, Buffer.from(JSON.stringify({ instances: [digit] }))),
    ]);
    expect(v2.status).toBe(504);
    expect(JSON.parse(v2.body.toString()).error).toContain('exec_timeout');
    expect(v1.status).toBe(504);
    expect(JSON.parse(v1.body.toString()).error).toMatchObject({ code: 'timeout' });
    const stats = JSON.parse((await sendRaw(s.base, 'GET', '/_/stats', {})).body.toString());
    expect(stats.timeouts).toBeGreaterThanOrEqual(2);
  }, 20_000);

  test('X-Timeout shortens exec_timeout for one request (of-watchdog); a longer one or a bad one is ignored', async () => {
    const send = (xt: string) => sendRaw(s.base, 'POST', '/v2/models/digits-classify/infer', { ...JSON_HEADERS, 'X-Timeout': xt }, v2Body(1));
    const [short, long, bad] = await Promise.all([send('250ms'), send('1h'), send('soon')]);
    expect(short.status).toBe(504);
    expect(JSON.parse(short.body.toString()).error).toContain('limit 250 ms');
    for (const r of [long, bad]) {
      expect(r.status).toBe(504);
      expect(JSON.parse(r.body.toString()).error).toContain('limit 3000 ms');
    }
  }, 20_000);

  test('health and metadata are not bounded by exec_timeout while requests wait', async () => {
    expect((await sendRaw(s.base, 'GET', '/v2/health/live', {})).status).toBe(200);
    expect((await sendRaw(s.base, 'GET', '/v2/models/digits-classify', {})).status).toBe(200);
  });

  test('a body that stops arriving gets 408 (read_timeout)', async () => {
    const reply = await new Promise<string>((resolve, reject) => {
      const sock = net.connect(s.port, '127.0.0.1');
      let got = '';
      const guard = setTimeout(() => {
        sock.destroy();
        reject(new Error(`no answer in 15 s; got ${JSON.stringify(got)}`));
      }, 15_000);
      sock.on('data', (c) => { got += c.toString(); });
      sock.on('close', () => {
        clearTimeout(guard);
        resolve(got);
      });
      sock.on('error', () => undefined);
      sock.write('POST /v2/models/digits-classify/infer HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"inputs": [');
    });
    expect(reply).toMatch(/^HTTP\/1\.1 408/);
  }, 20_000);
});

describe('a bad timeout setting', () => {
  const bad = [['exec_timeout', '30'], ['read_timeout', '1d'], ['write_timeout', '-5s']];
  test.each(bad)('%s=%j: the runtime refuses to start, naming it', async (name, value) => {
    const s = await boot({ [name]: value });
    try {
      const { code } = await Promise.race([
        s.fn.exited,
        new Promise<never>((_r, reject) => setTimeout(() => reject(new Error('still running after 20 s')), 20_000)),
      ]);
      expect(code).toBe(1);
      expect(s.fn.stderr).toContain(`bad configuration: ${name}=${JSON.stringify(value)}`);
      expect(s.fn.stderr).not.toContain('    at ');
    } finally {
      s.fn.kill();
      removeImage(s.dir);
    }
  }, 30_000);
});

describe('write_timeout (guardWrite)', () => {
  class FakeRes extends EventEmitter {
    destroyed = false;
    writableFinished = false;
    destroy() { this.destroyed = true; }
  }

  test('an answer not written in time: the connection is destroyed', async () => {
    const res = new FakeRes();
    guardWrite(res, 20);
    await new Promise((r) => setTimeout(r, 200));
    expect(res.destroyed).toBe(true);
  });

  test('an answer written in time is left alone', async () => {
    const res = new FakeRes();
    guardWrite(res, 50);
    res.writableFinished = true;
    res.emit('finish');
    await new Promise((r) => setTimeout(r, 200));
    expect(res.destroyed).toBe(false);
  });

  test('0 is none', async () => {
    const res = new FakeRes();
    guardWrite(res, 0);
    expect(res.listenerCount('finish')).toBe(0);
  });
});
