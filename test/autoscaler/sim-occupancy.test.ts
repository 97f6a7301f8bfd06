import { ProfileCapability } from '../../autoscaler/rapp/profile-capability';
import { DeviceLedger, Held } from '../../autoscaler/sim/devices';
import { simulate, SimFunction } from '../../autoscaler/sim/engine';
import { aFunction, synthProfile } from './fixtures';

// tokend under MPS (quotaScope 'occupancy'): a replica started at SM share s with quota q is charged
// device time × s and claims s·q of its GPU's window; grants scale down together only when the busy
// replicas' Σ s·q exceeds 1. Without MPS ('device') every replica claims its whole q.

const pts = synthProfile(); // 20 ms at batch 1, latency ∝ 1/quota
const capability = () => new ProfileCapability({ a: pts, b: pts });
const fn = (name: string, rps: number, seconds = 60): SimFunction => ({ spec: { ...aFunction().slo(200).maxScale(1).build(), name }, model: name,
  counts: new Array(seconds).fill(rps), intervalS: 1 });

const busy = (gpu: string, smShare: number, quota: number): Held => ({ gpu, smShare, quota, busy: true });

describe('device ledger: the quota a batch starts at under each scope', () => {
  test('two replicas at s = 0.5, q = 1 on one device: full quota under occupancy, half under device', () => {
    const d = new DeviceLedger<Held>(100);
    const [a, b] = [busy('g0', 0.5, 1), busy('g0', 0.5, 1)];
    d.place(a, 0);
    d.place(b, 0);
    expect(d.grant(a, 'occupancy')).toEqual({ quota: 1, claimed: 2, occupied: 1 });
    expect(d.grant(a, 'device').quota).toBeCloseTo(0.5, 12);
    expect(d.grant(a, 'slot').quota).toBe(1);
  });

  test('three at s = 0.5, q = 1 (Σ s·q = 1.5) are scaled by 2/3 under occupancy, by 1/3 under device', () => {
    const d = new DeviceLedger<Held>(100);
    const reps = [busy('g0', 0.5, 1), busy('g0', 0.5, 1), busy('g0', 0.5, 1)];
    for (const r of reps) d.place(r, 0);
    for (const r of reps) {
      expect(d.grant(r, 'occupancy').quota).toBeCloseTo(2 / 3, 12);
      expect(d.grant(r, 'device').quota).toBeCloseTo(1 / 3, 12);
    }
  });

  test('idle neighbours and other devices claim nothing; a partial quota scales from q', () => {
    const d = new DeviceLedger<Held>(100);
    const a = busy('g0', 0.5, 0.8);
    const idle = { ...busy('g0', 0.5, 1), busy: false };
    const elsewhere = busy('g1', 1, 1);
    const c = busy('g0', 0.6, 1);
    for (const r of [a, idle, elsewhere]) d.place(r, 0);
    expect(d.grant(a, 'occupancy').quota).toBe(0.8); // Σ s·q = 0.4
    expect(d.grant(a, 'device').quota).toBe(0.8); // Σ q = 0.8
    d.place(c, 0); // Σ s·q = 0.4 + 0.6 = 1.0: still within the window
    expect(d.grant(a, 'occupancy').quota).toBe(0.8);
    c.smShare = 1; // Σ s·q = 1.4
    expect(d.grant(a, 'occupancy').quota).toBeCloseTo(0.8 / 1.4, 12);
  });

  test('without MPS (every SM share 1) occupancy is the device scope', () => {
    const d = new DeviceLedger<Held>(100);
    const reps = [0.3, 0.9, 0.5, 1].map((q) => busy('g0', 1, q));
    for (const r of reps) {
      d.place(r, 0);
      for (const x of reps) expect(d.grant(x, 'occupancy')).toEqual(d.grant(x, 'device'));
    }
    expect(d.grant(reps[0], 'device').quota).toBeCloseTo(0.3 / 2.7, 12);
  });
});

describe('simulator: quotaScope occupancy', () => {
  // static-share at SM 0.5 / quota 1: the two functions' replicas share one device, one SM half each
  const halves = { policy: 'static-share', params: { perModel: false, smShare: 0.5, quota: 1 }, seed: 7, coldStartS: 1 };

  test('two replicas at s = 0.5, q = 1 on one device run at full speed under occupancy, at half under device', () => {
    const o = { ...halves, capability: capability() };
    const slot = simulate([fn('a', 30), fn('b', 30)], { ...o, quotaScope: 'slot' });
    const occupancy = simulate([fn('a', 30), fn('b', 30)], { ...o, quotaScope: 'occupancy' });
    const device = simulate([fn('a', 30), fn('b', 30)], { ...o, quotaScope: 'device' });
    expect(occupancy.deviceSeconds).toBeLessThanOrEqual(61); // one device
    expect(occupancy.oversubscribedBatches).toBeGreaterThan(0); // both busy at once: Σ q = 2...
    expect(occupancy.overCapacityBatches).toBe(0); // ...but Σ s·q = 1
    expect(occupancy.p50).toBe(slot.p50);
    expect(occupancy.violations).toBe(slot.violations);
    expect(device.p50).toBeGreaterThan(1.5 * occupancy.p50);
  });
});
