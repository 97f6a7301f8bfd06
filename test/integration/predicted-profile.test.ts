/**
 * Issue 12 live: a newly deployed ml-inference function gets a capability profile predicted from
 * its own ONNX graph before anything is measured (the CPU predictor shipped in
 * autoscaler/rapp/models, run in a child process), then one measured point (batch 1, quota 1)
 * and the profile predicted relative to it, in place of measuring the whole grid.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { haveCpuModels } from '../../autoscaler/rapp/cpu-predictor';
import { buildFunction } from '../../cli/build';
import { readStack } from '../../cli/stack';
import type { CapabilityProfile } from '../../node-runtime/profiler';
import { tokendBinaryPath } from '../../node-runtime/tokend-process';
import { eventually, testGateway, testRedis, TestPlatform } from '../helpers/platform';

const ROOT = join(__dirname, '../..');
// the grid is predicted only where a quota can be enforced (cgroups, or tokend's fallback)
const maybe = haveCpuModels() && existsSync(tokendBinaryPath()) ? describe : describe.skip;

maybe('deploy-time capability profile from the latency predictor', () => {
  let redis: Awaited<ReturnType<typeof testRedis>>;
  let p: TestPlatform;
  beforeAll(async () => {
    redis = await testRedis();
    p = await testGateway(redis.url, { MLFAAS_PROFILE_SECONDS: '0.5' });
    const stack = readStack(join(ROOT, 'stack.yml'));
    const fn = stack.functions.find((f) => f.name === 'digits-classify')!;
    buildFunction(fn, stack.file, p.cfg.templatesDir, p.images);
    const dep = { service: 'dc', image: fn.image, labels: { 'com.openfaas.scale.min': '1' }, annotations: { 'mlfaas.batch.max': '8' } };
    expect((await p.json('POST', '/system/functions', dep)).status).toBe(202);
  }, 60000);
  afterAll(async () => {
    await p?.stop();
    await redis?.stop();
  });

  it('stores the graph-only prediction first, then the profile from one measured point', async () => {
    const seen: CapabilityProfile[] = [];
    const final = await eventually(async () => {
      const r = await p.get('/system/capability?function=dc');
      if (r.status !== 200) return undefined;
      const prof = (await r.json()) as CapabilityProfile;
      if (seen[seen.length - 1]?.source !== prof.source) seen.push(prof);
      return prof.source === 'calibrated' ? prof : undefined;
    }, 90000, 20);
    expect(final).toBeDefined();
    // the graph-only stage was there for at least the measurement's time (it cannot be missed at 20 ms)
    expect(seen.map((s) => [s.source, s.measuredPoints])).toEqual([['predicted', 0], ['calibrated', 1]]);
    for (const prof of seen) {
      expect(prof.device).toBe('cpu');
      // the measured grid's shape: batches 1..8 × quotas 1, 0.5, 0.25, with no point missing
      expect(prof.points).toHaveLength(12);
      expect(new Set(prof.points.map((x) => x.batch))).toEqual(new Set([1, 2, 4, 8]));
      expect(new Set(prof.points.map((x) => x.quota))).toEqual(new Set([1, 0.5, 0.25]));
      for (const x of prof.points) {
        expect(x.latencyMs).toBeGreaterThan(0);
        // batch ÷ latency (predicted points); the measured point's own rate agrees by Little's law
        expect(Math.abs(x.throughput / ((1000 * x.batch) / x.latencyMs) - 1)).toBeLessThan(0.1);
      }
    }
    // less quota is never faster, and a quarter of the core is markedly slower than all of it
    const at = (b: number, q: number) => final!.points.find((x) => x.batch === b && x.quota === q)!.latencyMs;
    for (const b of [1, 2, 4, 8]) {
      expect(at(b, 0.5)).toBeGreaterThanOrEqual(at(b, 1));
      expect(at(b, 0.25)).toBeGreaterThanOrEqual(at(b, 0.5));
      expect(at(b, 0.25)).toBeGreaterThan(1.5 * at(b, 1));
    }
    console.log(`dc profile: graph-only b1@q1 ${seen[0].points.find((x) => x.batch === 1 && x.quota === 1)!.latencyMs} ms; ` +
      `measured ${at(1, 1)} ms; predicted from it b8@q0.25 ${at(8, 0.25)} ms`);
  }, 120000);
});
