/**
 * `faas-cli describe` after a restart shows the function's process (envProcess), not "<default>":
 * the registry keeps it across gateways, and `mlfaas up`'s redeploy of stack.yml sends the
 * template's fprocess as faas-cli does instead of replacing it with nothing.
 */
import { join } from 'node:path';
import { templateFprocess } from '../../cli/build';
import { readStack, toDeployment } from '../../cli/stack';
import { testGateway, testRedis } from '../helpers/platform';

const ROOT = join(__dirname, '../..');

describe('envProcess across a restart', () => {
  let redis: Awaited<ReturnType<typeof testRedis>>;
  beforeAll(async () => {
    redis = await testRedis();
  });
  afterAll(async () => {
    await redis?.stop();
  });

  test('a new gateway on the same Redis returns the envProcess of a deployed function', async () => {
    const env = { MLFAAS_AGENT: 'false' };
    const first = await testGateway(redis.url, env);
    const dep = { service: 'echo', image: 'ghcr.io/openfaas/alpine:latest', envProcess: 'cat', labels: { 'com.openfaas.scale.min': '0' } };
    expect((await first.json('POST', '/system/functions', dep)).status).toBe(202);
    await first.stop();
    const second = await testGateway(redis.url, env);
    try {
      const r = await second.get('/system/function/echo');
      expect(r.status).toBe(200);
      expect(((await r.json()) as { envProcess?: string }).envProcess).toBe('cat');
    } finally {
      await second.stop();
    }
  });

  test.each([
    { name: 'digits-classify', want: 'node index.js' }, // ml-inference template's fprocess
    { name: 'digits-train', want: 'node index.js' }, // ml-training
  ])('mlfaas up redeploys $name with its template\'s fprocess as envProcess', ({ name, want }) => {
    const stack = readStack(join(ROOT, 'stack.yml'));
    const f = stack.functions.find((x) => x.name === name)!;
    expect(toDeployment(f, templateFprocess(f, stack.file, join(ROOT, 'templates'))).envProcess).toBe(want);
  });

  test('a function\'s own fprocess wins over its template\'s', () => {
    const f = { name: 'x', lang: 'ml-inference', image: 'x:1', fprocess: 'node other.js', environment: {}, labels: {}, annotations: {} };
    expect(toDeployment(f, 'node index.js').envProcess).toBe('node other.js');
  });
});
