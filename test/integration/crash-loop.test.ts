/**
 * A function that cannot start: `mlfaas build` refuses an ml-inference function without its
 * model, and a function whose every replica crashes answers callers at once with a 503 that
 * carries the last error, instead of holding them until the scale-from-zero timeout.
 */
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildFunction } from '../../cli/build';
import { readStack } from '../../cli/stack';
import { ImageStore } from '../../gateway/providers/local/image-store';
import { summarizeExit } from '../../gateway/providers/local/exit-summary';
import { crashLoopError } from '../../gateway/proxy/function-state';
import { ReplicaInfo } from '../../gateway/registry/registry';
import { aFunction } from '../helpers/fixtures';
import { seedImage } from '../helpers/images';
import { eventually, testGateway, testRedis } from '../helpers/platform';

const CRASHER = `console.log('loading model');
console.error("Error: ENOENT: no such file or directory, open '/srv/fn/model.onnx'");
console.error('    at Object.openSync (node:fs:573:18)');
console.error('');
console.error('Node.js v20.0.0');
process.exit(1);
`;

describe('summarizeExit', () => {
  test.each([
    { name: 'no output', lines: [], code: 1, signal: null, want: 'exited (status 1)' },
    { name: 'signal', lines: ['serving'], code: null, signal: 'SIGKILL', want: 'exited (SIGKILL): serving' },
    { name: 'node crash: the error, not the version trailer',
      lines: ['loading model', "Error: Cannot find module './errors'", '    at foo (x.js:1:1)', '', 'Node.js v20.0.0'], code: 1, signal: null,
      want: "exited (status 1): Error: Cannot find module './errors'" },
  ])('$name', ({ lines, code, signal, want }) => {
    expect(summarizeExit(lines, code, signal)).toBe(want);
  });
});

describe('crashLoopError', () => {
  const r = (state: ReplicaInfo['state'], lastError?: string): ReplicaInfo =>
    ({ id: state, url: 'http://127.0.0.1:1', state, agent: 'a', startedAt: '', restarts: 1, weight: 1, quota: 1, ...(lastError ? { lastError } : {}) });
  test.each([
    { name: 'no replicas', replicas: [], want: undefined },
    { name: 'all crashed', replicas: [r('crashed', 'boom')], want: 'boom' },
    { name: 'restarting after a crash', replicas: [r('starting', 'boom'), r('crashed', 'bang')], want: 'boom' },
    { name: 'one ready', replicas: [r('crashed', 'boom'), r('ready')], want: undefined },
    { name: 'first start', replicas: [r('starting')], want: undefined },
  ])('$name', ({ replicas, want }) => {
    expect(crashLoopError(replicas)).toBe(want);
  });
});

it('mlfaas build refuses an ml-inference function without model.onnx, naming the expected path', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mlfaas-nomodel-'));
  try {
    mkdirSync(join(dir, 'fn'));
    writeFileSync(join(dir, 'fn', 'handler.js'), 'module.exports = {};\n');
    writeFileSync(join(dir, 'stack.yml'),
      'provider:\n  name: openfaas\nfunctions:\n  nomodel:\n    lang: ml-inference\n    handler: ./fn\n    image: test/nomodel:1\n');
    const stack = readStack(join(dir, 'stack.yml'));
    const store = new ImageStore(join(dir, 'images'));
    expect(() => buildFunction(stack.functions[0], stack.file, join(__dirname, '../../templates'), store)).toThrow(join(dir, 'fn', 'model.onnx'));
    expect(store.find('test/nomodel:1')).toBeUndefined();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

describe('a crash-looping function', () => {
  let redis: Awaited<ReturnType<typeof testRedis>>;
  let p: Awaited<ReturnType<typeof testGateway>>;
  beforeAll(async () => {
    redis = await testRedis();
    // a long scale-from-zero wait, so a prompt answer can only come from the crash-loop check
    p = await testGateway(redis.url, { MLFAAS_SCALE_FROM_ZERO_TIMEOUT_MS: '120000' });
    seedImage(p.images, 'test/crasher:1', { 'server.js': CRASHER },
      { language: 'node', kind: 'inference', mode: 'http', fprocess: 'node server.js', readiness: '/_/ready' });
  });
  afterAll(async () => {
    await p?.stop();
    await redis?.stop();
  });

  async function invokeTimed(name: string): Promise<{ status: number; ms: number; message: string }> {
    const t0 = Date.now();
    const res = await p.get(`/function/${name}`, { method: 'POST', body: 'x' });
    const body = (await res.json()) as { error: { message: string } };
    return { status: res.status, ms: Date.now() - t0, message: body.error.message };
  }

  it('answers 503 with the last error while its replicas crash and restart', async () => {
    expect((await p.json('POST', '/system/functions', aFunction('crashy').image('test/crasher:1').minScale(1).build())).status).toBe(202);
    const ref = { name: 'crashy', namespace: 'openfaas-fn' };
    expect(await eventually(async () => (await p.gw.provider.endpoints(ref)).some((r) => r.lastError), 30000, 100)).toBe(true);
    const r = await invokeTimed('crashy');
    expect(r.status).toBe(503);
    expect(r.ms).toBeLessThan(10000);
    expect(r.message).toMatch(/crash-looping/);
    expect(r.message).toContain("no such file or directory, open '/srv/fn/model.onnx'");
  }, 60000);

  it('answers a caller waiting for scale from zero as soon as the first replica crashes', async () => {
    expect((await p.json('POST', '/system/functions', aFunction('crashy0').image('test/crasher:1').minScale(0).build())).status).toBe(202);
    const r = await invokeTimed('crashy0');
    expect(r.status).toBe(503);
    expect(r.ms).toBeLessThan(30000); // far below the 120 s scale-from-zero wait
    expect(r.message).toContain('model.onnx');
  }, 60000);
});
