import { ScalingEvents } from '../../gateway/registry/scaling-events';
import { aFunction } from '../helpers/fixtures';
import { expectedCpuEnforcement } from '../helpers/host-enforcement';
import { seedEchoHttp } from '../helpers/images';
import { testGateway, testRedis, TestPlatform } from '../helpers/platform';

describe('scaling events', () => {
  let redis: Awaited<ReturnType<typeof testRedis>>;
  let p: TestPlatform;
  beforeAll(async () => {
    redis = await testRedis();
    p = await testGateway(redis.url);
    seedEchoHttp(p.images);
    expect((await p.json('POST', '/system/functions', aFunction('scaled').minScale(0).build())).status).toBe(202);
  });
  afterAll(async () => {
    await p?.stop();
    await redis?.stop();
  });

  it('lists decisions newest first and shows the last one in describe', async () => {
    const ev = new ScalingEvents(p.gw.redis);
    const ref = { name: 'scaled', namespace: 'openfaas-fn' };
    await ev.record(ref, { time: '2026-11-21T10:00:00Z', policy: 'hybrid', action: 'quota', replica: 'scaled-a', from: 0.5, to: 0.7, reason: 'R 30 > α·C 25' });
    await ev.record(ref, { time: '2026-11-21T10:00:05Z', policy: 'hybrid', action: 'replicas', from: 1, to: 2, reason: 'quota at max' });
    const list = (await (await p.get('/system/scaling-events?function=scaled')).json()) as Array<{ action: string }>;
    expect(list.map((e) => e.action)).toEqual(['replicas', 'quota']);
    expect(((await (await p.get('/system/scaling-events?function=scaled.openfaas-fn&limit=1')).json()) as unknown[]).length).toBe(1);
    const fn = (await (await p.get('/system/function/scaled')).json()) as { annotations: Record<string, string> };
    expect(fn.annotations['mlfaas.autoscaler.last-decision']).toBe('2026-11-21T10:00:05Z hybrid: replicas 1→2 — quota at max');
    // describe also says what is enforced (or that the CPU quota is only the voluntary tokend gate)
    // describe also says what is enforced, as this host allows it (found by trying it here, not by
    // asking the provider): the kernel's CFS bandwidth where a cgroup quota can be written, else
    // the voluntary tokend gate said loudly; and the same as /system/info says
    const want = {
      cfs: /^kernel-enforced: .*CFS bandwidth \(temporal\)/,
      tokend: /^WARNING: .*CPU quota falls back to the tokend gate: VOLUNTARY/,
      none: /^WARNING: nothing enforced/,
    }[expectedCpuEnforcement()];
    expect(fn.annotations['mlfaas.enforcement']).toMatch(want);
    const info = (await (await p.get('/system/info')).json()) as { mlfaas: { enforcement: { summary: string } } };
    expect(fn.annotations['mlfaas.enforcement']).toBe(info.mlfaas.enforcement.summary);
    expect((await p.json('DELETE', '/system/functions', { functionName: 'scaled' })).status).toBe(202);
    expect(await ev.list(ref)).toEqual([]);
  });
});
