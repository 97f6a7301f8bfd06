/**
 * tokend is supervised: killed with SIGKILL, it is started again on the same sockets, the death
 * and the restart are in the platform log and the restart metric, and the replicas' quotas are
 * pushed again (a new tokend starts without rules).
 */
import { existsSync, readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { buildFunction } from '../../cli/build';
import { readStack } from '../../cli/stack';
import { isAlive } from '../../gateway/lib/process';
import { createTokendControl } from '../../node-runtime/tokend-control';
import { tokendBinaryPath } from '../../node-runtime/tokend-process';
import { restartDelayMs, TOKEND_BACKOFF_MS } from '../../node-runtime/tokend-supervisor';
import { eventually, testGateway, testRedis } from '../helpers/platform';

const ROOT = join(__dirname, '../..');
const maybe = existsSync(tokendBinaryPath()) ? it : it.skip;

test.each([
  { consecutive: 0, want: TOKEND_BACKOFF_MS[0] },
  { consecutive: 2, want: TOKEND_BACKOFF_MS[2] },
  { consecutive: 99, want: TOKEND_BACKOFF_MS[TOKEND_BACKOFF_MS.length - 1] },
])('restart backoff after $consecutive restarts in a row: $want ms', ({ consecutive, want }) => {
  expect(restartDelayMs(consecutive)).toBe(want);
});

maybe('restarts tokend after SIGKILL, logs it, counts it and re-applies the replicas\' quotas', async () => {
  const redis = await testRedis();
  // tokend holds CPU quotas only where cgroups do not (here: isolation off); GPU quotas always
  const p = await testGateway(redis.url, { MLFAAS_ISOLATION: 'off' });
  expect(p.gw.provider.enforcement().temporal).toBe('tokend');
  const logged: string[] = [];
  const write = process.stderr.write.bind(process.stderr);
  const spy = jest.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array, ...rest: unknown[]) => {
    logged.push(String(chunk));
    return (write as (...a: unknown[]) => boolean)(chunk, ...rest);
  });
  try {
    const stack = readStack(join(ROOT, 'stack.yml'));
    const fn = stack.functions.find((f) => f.name === 'digits-classify')!;
    buildFunction(fn, stack.file, p.cfg.templatesDir, p.images);
    const dep = { service: 'digits', image: fn.image, labels: { 'com.openfaas.scale.min': '1' }, annotations: {} };
    expect((await p.json('POST', '/system/functions', dep)).status).toBe(202);
    const ref = { name: 'digits', namespace: 'openfaas-fn' };
    expect(await eventually(async () => (await p.gw.provider.endpoints(ref))[0]?.state === 'ready', 60000, 100)).toBe(true);
    const [r] = await p.gw.provider.endpoints(ref);
    await p.gw.provider.setQuota(ref, r.id, 0.5);
    expect(await eventually(() => p.gw.agent!.local(ref)[0]?.quota === 0.5, 10000)).toBe(true);

    const tokend = p.gw.tokend!;
    const control = createTokendControl(tokend.controlPath);
    // not placed: all cores at quota 0.5, i.e. half of tokend's whole-node CPU device
    const share = (0.5 * cpus().length) / cpus().length;
    const body = readFileSync(join(ROOT, 'functions', 'digits-classify', 'digit.json'));
    /** The replica's limit as tokend sees it, after one batch (the runtime connects on demand). */
    const limitSeen = async () => {
      await (await fetch(`${p.gw.url}/function/digits`, { method: 'POST', body })).arrayBuffer();
      const st = await control.stats().catch(() => undefined);
      return st?.clients.find((c) => c.pid === r.pid && c.device === 'cpu')?.limit;
    };
    expect(await eventually(async () => Math.abs(((await limitSeen()) ?? 9) - share) < 1e-3, 15000, 100)).toBe(true);

    const old = tokend.pid;
    process.kill(old, 'SIGKILL');
    expect(await eventually(() => tokend.pid !== old && isAlive(tokend.pid), 20000, 50)).toBe(true);
    // the replica reconnects to the new tokend and its quota is the one the autoscaler set, not the default
    expect(await eventually(async () => Math.abs(((await limitSeen()) ?? 9) - share) < 1e-3, 20000, 100)).toBe(true);
    const metrics = await (await p.get('/metrics')).text();
    expect(metrics).toMatch(/mlfaas_component_restarts_total\{component="tokend"\} 1/);
    const log = logged.join('');
    expect(log).toMatch(new RegExp(`tokend \\(pid ${old}\\) died \\(SIGKILL\\)`));
    expect(log).toMatch(/tokend restarted \(pid \d+, restart 1\)/);
  } finally {
    spy.mockRestore();
    await p.stop();
    await redis.stop();
  }
}, 120000);
