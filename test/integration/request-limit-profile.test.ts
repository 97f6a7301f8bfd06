/**
 * <request, limit> end to end on this machine (issue 24): the deploy-time profiler finds an
 * ml-inference function's request (Dilu's HGSS over its measured CPU profile, against its SLO)
 * and limit (2 × request), the live autoscaler's actuator sets a quota with the profiled ratio, and
 * the replica's cgroup holds both: cpu.shares ∝ request, CFS quota = limit.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Actuator } from '../../autoscaler/live/actuator';
import { buildFunction } from '../../cli/build';
import { readStack } from '../../cli/stack';
import type { CapabilityProfile } from '../../gateway/providers/capability-profile';
import { PlacementBook } from '../../gateway/registry/placements';
import type { ScalingEvents } from '../../gateway/registry/scaling-events';
import { Cgroups } from '../../node-runtime/cgroups';
import { CFS_PERIOD_US } from '../../node-runtime/cpu-values';
import { sandboxUnavailable } from '../../node-runtime/sandbox';
import { tokendBinaryPath } from '../../node-runtime/tokend-process';
import { eventually, testGateway, testRedis, TestPlatform } from '../helpers/platform';

const ROOT = join(__dirname, '../..');
const cg = sandboxUnavailable() ? undefined : Cgroups.detect();
const maybe = existsSync(tokendBinaryPath()) && cg?.version === 1 && cg.hasCpuset ? describe : describe.skip;
const ref = { name: 'img-rl', namespace: 'openfaas-fn' };
const SLO_MS = 300;

maybe('profiled <request, limit> reaches the replica through the actuator', () => {
  let redis: Awaited<ReturnType<typeof testRedis>>;
  let p: TestPlatform;

  beforeAll(async () => {
    redis = await testRedis();
    p = await testGateway(redis.url, { MLFAAS_PROFILE_SECONDS: '0.5', MLFAAS_PROFILE_MODE: 'measured' });
    const stack = readStack(join(ROOT, 'stack.yml'));
    const fn = stack.functions.find((f) => f.name === 'image-classify')!;
    buildFunction({ ...fn, labels: { 'com.openfaas.scale.min': '1', 'com.openfaas.scale.max': '1' } }, stack.file, p.cfg.templatesDir, p.images);
    const dep = { service: ref.name, image: fn.image, labels: { 'com.openfaas.scale.min': '1' },
      annotations: { 'mlfaas.batch.max': '1', 'mlfaas.slo.latency_ms': String(SLO_MS) } };
    expect((await p.json('POST', '/system/functions', dep)).status).toBe(202);
  }, 60000);

  afterAll(async () => {
    await p?.stop();
    await redis?.stop();
  });

  test('request: HGSS against SLO / 2; limit 2 × request; the actuator sets both; the kernel holds both', async () => {
    const profile = await eventually(async () => {
      const r = await p.get(`/system/capability?function=${ref.name}`);
      const body = r.status === 200 ? ((await r.json()) as CapabilityProfile) : undefined;
      return body?.requestLimit ? body : undefined;
    }, 90000, 200);
    expect(profile).toBeDefined();
    const rl = profile!.requestLimit!;
    const b1 = profile!.points.filter((x) => x.batch === 1).map((x) => `q${x.quota} ${x.latencyMs} ms`).join(', ');
    console.log(`img-rl (SLO ${SLO_MS} ms): profile b1 ${b1}; <request, limit> = <${rl.request}, ${rl.limit}> at batch ${rl.batch}`);
    expect(rl.sloMs).toBe(SLO_MS);
    expect(rl.request).toBeGreaterThanOrEqual(0.1);
    expect(rl.request).toBeLessThanOrEqual(1);
    expect(rl.limit).toBeCloseTo(Math.min(1, 2 * rl.request), 9);
    // the request meets SLO / 2 at batch 1 on the profile: the measured point at the whole core does
    expect(profile!.points.find((x) => x.batch === 1 && x.quota === 1)!.latencyMs).toBeLessThanOrEqual(SLO_MS / 2);

    const [rep] = await p.gw.provider.endpoints(ref);
    const core = cg!.nodeCores[0];
    await new PlacementBook(p.gw.redis).write(ref, rep.id, { gpu: `cpu${core}`, smShare: 1, batchSize: 1 });
    const events = { record: async () => undefined } as unknown as ScalingEvents;
    const placed = { id: rep.id, fn: ref.name, ready: true, gpu: `cpu${core}`, smShare: 1, quota: 1, batchSize: 1 };
    const out = await new Actuator(p.gw.provider, events, 'test')
      .apply(ref, 1, [placed], { replicas: 1, quotas: [{ replicaId: rep.id, quota: 0.3 }], add: [], remove: [], weights: {}, reason: 'test' }, 1, Date.now());
    expect(out.map((o) => o.ok)).toEqual([true]);
    const limit = Math.min(1, 0.3 * (rl.limit / rl.request));
    const file = (f: string) => readFileSync(join('/sys/fs/cgroup/cpu/mlfaas', rep.id, f), 'utf8').trim();
    expect(await eventually(() => file('cpu.shares') === '307' && file('cpu.cfs_quota_us') === String(Math.round(limit * CFS_PERIOD_US)), 5000))
      .toBe(true);
    // a limit below the request, or above the device, is refused
    await expect(p.gw.provider.setQuota(ref, rep.id, 0.5, 0.3)).rejects.toThrow(/limit/);
    await expect(p.gw.provider.setQuota(ref, rep.id, 0.5, 1.2)).rejects.toThrow(/limit/);
    const [after] = await p.gw.provider.endpoints(ref);
    expect(after.quota).toBe(0.3);
    expect((after as unknown as { limit: number }).limit).toBeCloseTo(limit, 9);
  }, 120000);
});
