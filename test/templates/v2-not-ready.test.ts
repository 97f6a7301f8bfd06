/**
 * The Open Inference Protocol while the model loads or the function drains (issue 25): live stays
 * 200, ready / model ready / metadata / infer answer 503 with {"error"}. A real server.js HTTP
 * server on 127.0.0.1 with the model not there yet.
 */
import * as http from 'node:http';
import { AddressInfo } from 'node:net';
import { sendRaw } from '../fixtures/v2/cases';
// eslint-disable-next-line @typescript-eslint/no-var-requires
const { createServer } = require('../../templates/ml-inference/server');
// eslint-disable-next-line @typescript-eslint/no-var-requires
const { Stats } = require('../../templates/ml-inference/stats');

describe('/v2 before the model is ready and while draining', () => {
  const state = { ready: false, draining: false };
  let server: http.Server;
  let base: string;
  beforeAll(async () => {
    ({ server } = createServer({
      state, stats: new Stats(), log: () => undefined, maxBodyBytes: 1 << 20, model: () => null, batcher: () => null, codec: () => null,
      functionName: '', modelVersion: '1', readTimeoutMs: null, writeTimeoutMs: 0, execTimeoutMs: 0, counters: { timeouts: 0 },
    }));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  const body = Buffer.from(JSON.stringify({ inputs: [{ name: 'x', shape: [1], datatype: 'FP32', data: [1] }] }));
  test.each([
    ['loading', false],
    ['draining', true],
  ])('%s', async (why, draining) => {
    state.draining = draining;
    expect((await sendRaw(base, 'GET', '/v2/health/live', {})).status).toBe(200);
    for (const [method, p] of [['GET', '/v2/health/ready'], ['GET', '/v2/models/m/ready'], ['GET', '/v2/models/m'], ['POST', '/v2/models/m/infer']]) {
      const r = await sendRaw(base, method, p, { 'Content-Type': 'application/json' }, method === 'POST' ? body : undefined);
      expect([p, r.status]).toEqual([p, 503]);
      const doc = JSON.parse(r.body.toString());
      expect(doc.error).toContain(why === 'loading' ? 'loading' : 'shutting down');
    }
    // the server still answers what needs no model
    expect((await sendRaw(base, 'GET', '/v2', {})).status).toBe(200);
  });
});
