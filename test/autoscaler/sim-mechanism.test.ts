import { ProfileCapability } from '../../autoscaler/rapp/profile-capability';
import { simulate, SimFunction } from '../../autoscaler/sim/engine';
import { aFunction, synthProfile } from './fixtures';

// Two functions on one profile (20 ms at batch 1, latency ∝ 1/quota, 20·b^0.3 ms at batch b)
const pts = synthProfile();
const capability = () => new ProfileCapability({ a: pts, b: pts });
const fn = (name: string, rps: number, seconds = 60): SimFunction => ({ spec: { ...aFunction().slo(200).maxScale(1).build(), name }, model: name,
  counts: new Array(seconds).fill(rps), intervalS: 1 });

describe('simulator: replicas enforced as the platform enforces them', () => {
  // static-share at SM 0.5 / quota 1: the two functions' replicas share one device, one SM row each
  const halves = { policy: 'static-share', params: { perModel: false, smShare: 0.5, quota: 1 }, seed: 7, coldStartS: 1 };

  test('per SM row (default), replicas in two rows of a device each get their whole quota', () => {
    const o = { ...halves, capability: capability() };
    const plain = simulate([fn('a', 30), fn('b', 30)], o);
    const slot = simulate([fn('a', 30), fn('b', 30)], { ...o, quotaScope: 'slot' });
    expect(slot.violations).toBe(plain.violations);
    expect(slot.p50).toBe(plain.p50);
    expect(plain.deviceSeconds).toBeLessThanOrEqual(61); // one device
    expect(plain.oversubscribedBatches).toBeGreaterThan(0); // both busy at once: Σ quota 2
    expect(plain.p50).toBeLessThan(40);
  });

  test("per device (tokend's one window per GPU), the same two replicas split the device's time", () => {
    const o = { ...halves, capability: capability() };
    const slot = simulate([fn('a', 30), fn('b', 30)], o);
    const device = simulate([fn('a', 30), fn('b', 30)], { ...o, quotaScope: 'device' });
    expect(device.requests).toBe(slot.requests);
    // a batch beside a busy neighbour runs at quota 0.5: 40 ms, and 30 req/s then queue
    expect(device.p50).toBeGreaterThan(1.5 * slot.p50);
    expect(device.violations).toBeGreaterThan(slot.violations);
  });

  test('one replica alone on its device is not slowed by per-device metering', () => {
    const o = { policy: 'static-share', params: { perModel: false, smShare: 1, quota: 0.5 }, capability: capability(), seed: 3, coldStartS: 1 };
    const slot = simulate([fn('a', 10)], o);
    const device = simulate([fn('a', 10)], { ...o, quotaScope: 'device' });
    expect(device.oversubscribedBatches).toBe(0);
    expect(device.p50).toBe(slot.p50);
  });

  test("a replica planned at batch 1 batches up to the function's maxBatchSize, as the runtime does", () => {
    // static-share plans batch 1: 50 req/s a replica, under 70 req/s; the runtime's batches of 4 serve 132 req/s
    const o = { policy: 'static-share', params: { perModel: false, smShare: 1, quota: 1 }, capability: capability(), seed: 5, coldStartS: 1 };
    const planned = simulate([fn('a', 70, 30)], o);
    const runtime = simulate([fn('a', 70, 30)], { ...o, replicaBatch: 'function' });
    expect(planned.violationRate).toBeGreaterThan(0.3);
    expect(runtime.violationRate).toBeLessThan(0.05);
    expect(runtime.batches).toBeLessThan(planned.batches);
  });
});
