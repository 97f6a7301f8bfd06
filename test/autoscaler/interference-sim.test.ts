import { ProfileCapability } from '../../autoscaler/rapp/profile-capability';
import { DILU_INTERFERENCE_BETA, InterferenceAwareCapability, plannedSlowdown, slowdown } from '../../autoscaler/inference/interference';
import { simulate, SimFunction } from '../../autoscaler/sim/engine';
import { estimateProfileNoise, remeasure } from '../../autoscaler/sim/profile-error';
import { mulberry32, normal } from '../../autoscaler/sim/rng';
import { buildCluster } from '../../autoscaler/sim/setup';
import { aFunction, cap, synthProfile } from './fixtures';

const steady = (name: string, rps: number, seconds: number, slo = 200): SimFunction => ({ spec: { ...aFunction().slo(slo).maxScale(4).build(), name },
  model: name, counts: new Array(seconds).fill(rps), intervalS: 1 });
/** Two functions with the same profile, each with a fixed share of SM 0.3 at quota 1 (three fit one device). */
const two = () => new ProfileCapability({ a: synthProfile(), b: synthProfile() });
const fixed = { perModel: false, smShare: 0.3, quota: 1 };

describe('interference model (Dilu Fig. 7)', () => {
  test('slowdown is 1 + β·u, u the busy neighbours\' share, capped at the whole device', () => {
    expect(DILU_INTERFERENCE_BETA).toBeCloseTo(0.24, 9);
    expect(slowdown(0.24, 0)).toBe(1);
    expect(slowdown(0.24, 0.5)).toBeCloseTo(1.12, 9);
    expect(slowdown(0.24, 3)).toBeCloseTo(1.24, 9);
    expect(slowdown(0.24, -1)).toBe(1);
  });

  test('policies plan with the worst case their share leaves: a whole device has no neighbours', () => {
    expect(plannedSlowdown(0.24, 1, 1)).toBe(1);
    expect(plannedSlowdown(0.24, 0.5, 0.5)).toBeCloseTo(1.18, 9);
    const base = cap();
    const aware = new InterferenceAwareCapability(base, 0.24);
    expect(aware.latencyMs('f', 2, 0.3, 0.5)).toBeCloseTo(base.latencyMs('f', 2, 0.3, 0.5) * (1 + 0.24 * 0.85), 9);
    expect(aware.capability('f', 2, 0.3, 0.5)).toBeCloseTo(base.capability('f', 2, 0.3, 0.5) / (1 + 0.24 * 0.85), 6);
    expect(aware.latencyMs('f', 1, 1, 1)).toBe(base.latencyMs('f', 1, 1, 1));
    expect(aware.grid('f')).toEqual(base.grid('f'));
    // its own cache token, stable, never the base's (policies cache per token)
    const k = aware.profileKey('f');
    expect(k).toBeDefined();
    expect(k).not.toBe(base.profileKey('f'));
    expect(aware.profileKey('f')).toBe(k);
  });
});

describe('simulator: interference, device cost, policies told a profile', () => {
  test('replicas sharing a device slow each other while busy; a function alone is unaffected', () => {
    const fns = [steady('a', 30, 60), steady('b', 30, 60)];
    const o = { policy: 'static-share', params: fixed, capability: two(), seed: 5, coldStartS: 0 };
    const clean = simulate(fns, o);
    const slowed = simulate(fns, { ...o, interferenceBeta: 0.24 });
    expect(slowed.requests).toBe(clean.requests);
    expect(slowed.p50).toBeGreaterThan(clean.p50 * 1.005);
    expect(slowed.p50).toBeLessThan(clean.p50 * 1.24 + 1e-9);
    const alone = { ...o, capability: new ProfileCapability({ a: synthProfile() }) };
    expect(simulate([steady('a', 30, 60)], { ...alone, interferenceBeta: 0.24 }).p50).toBe(simulate([steady('a', 30, 60)], alone).p50);
  });

  test('devices are billed whole: two 0.3 shares on one device cost one device, an exclusive replica its device', () => {
    const fns = [steady('a', 2, 100), steady('b', 2, 100)];
    const r = simulate(fns, { policy: 'static-share', params: fixed, capability: two(), pricePerGpuHour: 3600, coldStartS: 0 });
    expect(r.gpuSeconds).toBeCloseTo(2 * 0.3 * 100, 6);
    expect(r.deviceSeconds).toBeCloseTo(100, 6);
    expect(r.deviceCost).toBeCloseTo(100, 6);
    const k = simulate([steady('a', 2, 100)], { policy: 'kpa', capability: new ProfileCapability({ a: synthProfile() }), coldStartS: 0 });
    expect(k.deviceSeconds).toBeCloseTo(k.gpuSeconds, 6);
    expect(k.deviceSeconds).toBeGreaterThanOrEqual(100 - 1e-6);
  });

  test('policies plan from what they are told; latencies come from the ground truth', () => {
    const truth = cap();
    const pessimistic = new ProfileCapability({ f: synthProfile().map((p) => ({ ...p, latencyMs: p.latencyMs * 2 })) });
    const fn = steady('f', 40, 90, 150);
    const o = { policy: 'hybrid', capability: truth, seed: 9, coldStartS: 5 };
    const told = simulate([fn], o);
    const wary = simulate([fn], { ...o, told: pessimistic });
    expect(wary.gpuSeconds).toBeGreaterThan(told.gpuSeconds * 1.3);
    // served by the same (true) latency surface: holding more, it is no slower
    expect(wary.p50).toBeLessThanOrEqual(told.p50 + 1e-9);
  });
});

describe('profile noise', () => {
  test('σ is recovered from second differences along a flat SM axis', () => {
    const rand = mulberry32(3);
    const noisy = synthProfile().map((p) => ({ ...p, latencyMs: p.latencyMs * Math.exp(0.05 * normal(rand)) }));
    const e = estimateProfileNoise(noisy);
    expect(e.n).toBeGreaterThan(100);
    expect(e.sigma).toBeGreaterThan(0.04);
    expect(e.sigma).toBeLessThan(0.06);
    expect(estimateProfileNoise(synthProfile()).sigma).toBeLessThan(1e-9);
  });

  test('a re-measured profile is seeded, unbiased in log, and leaves the grid as it was', () => {
    const pts = synthProfile();
    const a = remeasure(pts, 0.05, 11);
    expect(remeasure(pts, 0.05, 11)).toEqual(a);
    expect(remeasure(pts, 0.05, 12)).not.toEqual(a);
    const logs = a.map((p, i) => Math.log(p.latencyMs / pts[i].latencyMs));
    const mean = logs.reduce((x, y) => x + y, 0) / logs.length;
    const sd = Math.sqrt(logs.reduce((x, y) => x + (y - mean) ** 2, 0) / logs.length);
    expect(Math.abs(mean)).toBeLessThan(0.01);
    expect(sd).toBeGreaterThan(0.04);
    expect(sd).toBeLessThan(0.06);
    expect(a.map(({ batch, smShare, quota }) => [batch, smShare, quota])).toEqual(pts.map(({ batch, smShare, quota }) => [batch, smShare, quota]));
  });
});

const DATA = process.env.MLFAAS_DATA_DIR ?? '/work/shared/data';
const haveData = require('node:fs').existsSync(`${DATA}/latency/rapp_v100/rapp_latency_bs_sm_quota.csv`);
(haveData ? describe : describe.skip)('buildCluster (RaPP data)', () => {
  test('parts share one cluster under prefixed names; the policies\' profile is a separate, noisy measurement', () => {
    const trace = { name: 't', intervalS: 1, series: [{ name: 's', counts: [5, 5, 5] }] };
    const b = buildCluster(
      [
        { prefix: 'x', trace, options: { models: ['resnet50'], sloMult: 2, profileError: { sigma: 0.05, seed: 1 } } },
        { prefix: 'y', trace, options: { models: ['resnet50'], sloMult: 1.5, profileError: { sigma: 0.05, seed: 1 } } },
      ],
      DATA,
    );
    expect(b.fns.map((f) => f.spec.name)).toEqual(['x-s-resnet50', 'y-s-resnet50']);
    expect(b.fns[1].spec.sloLatencyMs).toBeLessThan(b.fns[0].spec.sloLatencyMs);
    const truth = b.capability.latencyMs('x-s-resnet50', 2, 0.5, 0.5);
    expect(b.told.latencyMs('x-s-resnet50', 2, 0.5, 0.5)).not.toBe(truth);
    expect(Math.abs(Math.log(b.told.latencyMs('x-s-resnet50', 2, 0.5, 0.5) / truth))).toBeLessThan(0.25);
    // seeds run on across parts: the two functions' profiles are different measurements
    expect(b.told.latencyMs('y-s-resnet50', 2, 0.5, 0.5)).not.toBe(b.told.latencyMs('x-s-resnet50', 2, 0.5, 0.5));
    expect(b.capability.latencyMs('y-s-resnet50', 2, 0.5, 0.5)).toBe(truth);
  });
});
