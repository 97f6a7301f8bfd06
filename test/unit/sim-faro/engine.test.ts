import type { ClusterController, ClusterView, ControllerDecision, JobAllocation } from '../../../autoscaler/multitenant/types';
import { faroSimConfig, runFaroSim, type FaroSimConfig } from '../../../autoscaler/sim/faro';

/** Deterministic service (180 ms at quota 1) and an instant proxy, so latencies are exact. */
function cfg(over: Partial<FaroSimConfig> = {}): FaroSimConfig {
  return faroSimConfig(4, {
    service: { shape: 0, loc: 0.18, scale: 0 },
    route: { shape: 0, loc: 0, scale: 0 },
    ...over,
  });
}

/** A controller that returns the scripted allocation at the given tick times and records every view. */
function scripted(script: Record<number, Array<JobAllocation | null>>, tickS = 1): ClusterController & { views: ClusterView[] } {
  const views: ClusterView[] = [];
  return {
    name: 'scripted',
    tickS,
    views,
    tick(view: ClusterView): ControllerDecision | null {
      views.push(view);
      const jobs = script[Math.round(view.nowS)];
      return jobs ? { jobs, reason: 'script' } : null;
    },
  };
}

function run(arrivals: number[], controller: ClusterController, over: Partial<FaroSimConfig> = {}, initial = 1) {
  return runFaroSim({
    cfg: cfg(over),
    jobNames: ['a'],
    arrivals: [Float64Array.from(arrivals)],
    controller,
    initialReplicas: [initial],
    seed: 1,
  });
}

const latMs = (rec: ReturnType<typeof run>, i: number) => Math.round((rec.end[i] - rec.arrival[i]) * 1e3);

describe('Faro simulator core', () => {
  test('one request on one replica takes the service time', () => {
    const rec = run([0.5], scripted({}));
    expect(latMs(rec, 0)).toBe(180);
    expect(rec.dropped[0]).toBe(0);
  });

  test('a replica serves its (at most 4) assigned requests one at a time; the 5th waits at the job queue', () => {
    const rec = run([0, 0, 0, 0, 0], scripted({}));
    expect([0, 1, 2, 3, 4].map((i) => latMs(rec, i))).toEqual([180, 360, 540, 720, 900]);
  });

  test('tail drop above a queue of 50 (the request the scheduler holds is not counted)', () => {
    const rec = run(new Array(60).fill(0), scripted({}));
    const dropped = Array.from(rec.dropped).reduce((a, b) => a + b, 0);
    expect(dropped).toBe(4);
    expect(Array.from(rec.dropped.slice(0, 56)).every((d) => d === 0)).toBe(true);
  });

  test('a replica at quota q serves in p / q', () => {
    const rec = run([2], scripted({ 1: [{ quota: 0.5 }] }));
    expect(latMs(rec, 0)).toBe(360);
  });

  test('a new pod starts after the 35-s cold start', () => {
    const c = scripted({ 10: [{ replicas: 2 }] });
    run([80], c);
    const ready = (t: number) => c.views.find((v) => Math.round(v.nowS) === t)!.jobs[0];
    expect(ready(44).readyReplicas).toBe(1);
    expect(ready(44).replicas).toBe(2);
    expect(ready(46).readyReplicas).toBe(2);
  });

  test('an idle pod of the job is reused (3-s hot start) until reclaimed 30 s after it went idle', () => {
    const hot = scripted({ 1: [{ replicas: 2 }], 40: [{ replicas: 1 }], 50: [{ replicas: 2 }] });
    run([100], hot, {}, 2);
    const at = (c: typeof hot, t: number) => c.views.find((v) => Math.round(v.nowS) === t)!.jobs[0].readyReplicas;
    expect(at(hot, 52)).toBe(1);
    expect(at(hot, 54)).toBe(2);
    const cold = scripted({ 40: [{ replicas: 1 }], 90: [{ replicas: 2 }] });
    run([140], cold, {}, 2);
    expect(at(cold, 94)).toBe(1);
    expect(at(cold, 126)).toBe(2);
  });

  test('an upscale beyond the cluster waits for units and retries', () => {
    const c = scripted({ 1: [{ replicas: 6 }] });
    run([100], c);
    const v = c.views.find((x) => Math.round(x.nowS) === 50)!.jobs[0];
    expect(v.readyReplicas).toBe(4);
    expect((v as { scaling?: boolean }).scaling).toBe(true);
  });

  test('the view carries the offered rate of the last 30 s (arrivalRps) and completed minutes only', () => {
    const c = scripted({}, 10);
    run(Array.from({ length: 90 }, (_, i) => 0.5 + i), c);
    const v30 = c.views.find((v) => Math.round(v.nowS) === 30)!.jobs[0];
    expect(v30.arrivalRps).toBeCloseTo(1, 10);
    expect(v30.minuteCounts).toEqual([]);
    expect(c.views.find((v) => Math.round(v.nowS) === 60)!.jobs[0].minuteCounts).toEqual([60]);
  });

  test('accept rate: as the artifact only with a replica change; immediately when configured', () => {
    const asArtifact = run([5, 6], scripted({ 1: [{ acceptRate: 0 }] }));
    expect(Array.from(asArtifact.dropped)).toEqual([0, 0]);
    const withChange = run([50, 51], scripted({ 1: [{ replicas: 2, acceptRate: 0 }] }));
    expect(Array.from(withChange.dropped)).toEqual([1, 1]);
    const immediate = run([5, 6], scripted({ 1: [{ acceptRate: 0 }] }), { acceptRateOnlyWithReplicaChange: false });
    expect(Array.from(immediate.dropped)).toEqual([1, 1]);
  });
});
