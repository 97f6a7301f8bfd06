import type { ClusterController, ClusterView, ControllerDecision } from '../../../autoscaler/multitenant/types';
import { FaroHybrid, type LongTermPolicy } from '../../../autoscaler/reproductions/faro/hybrid';
import { faroSimConfig, poissonArrivals, runFaroSim, analyzeFaro } from '../../../autoscaler/sim/faro';

/** Records the views a controller gets. */
function recording(inner: ClusterController): ClusterController & { views: ClusterView[] } {
  const views: ClusterView[] = [];
  return {
    name: inner.name,
    tickS: inner.tickS,
    views,
    tick(v: ClusterView): ControllerDecision | null {
      views.push(v);
      return inner.tick(v);
    },
  };
}

describe('Faro hybrid in the simulator', () => {
  test('an overloaded job gets +1 from the short-term rule, then the long-term target, each after its start delay', () => {
    // One job, 10 req/s for 3 minutes: one replica (≈ 6.5 req/s) is overloaded.
    const trace = { jobs: ['a'], counts: [[600, 600, 600]] };
    const lt: LongTermPolicy = { name: 'fixed', plan: (v) => v.jobs.map(() => ({ target: 4 })) };
    const c = recording(new FaroHybrid(lt));
    const rec = runFaroSim({
      cfg: faroSimConfig(8),
      jobNames: trace.jobs,
      arrivals: poissonArrivals(trace, 7),
      controller: c,
      initialReplicas: [1],
      seed: 7,
    });
    const at = (t: number) => c.views.find((v) => Math.round(v.nowS) === t)!.jobs[0];
    // Ticks 10, 20, 30 over the SLO → +1 at 30, a new pod: ready 35 s later.
    expect(at(40).replicas).toBe(2);
    expect(at(60).readyReplicas).toBe(1);
    expect(at(70).readyReplicas).toBe(2);
    // The long-term step at 60 s asks for 4; the executor is busy until 65 s, so it is retried on later ticks.
    expect(at(120).replicas).toBe(4);
    expect(at(150).readyReplicas).toBe(4);
    const m = analyzeFaro(rec, 720, { slots: 3 });
    expect(m.requests).toBe(1800);
    expect(m.perJobUtility[0]).toBeGreaterThan(0);
    expect(m.perJobUtility[0]).toBeLessThanOrEqual(1);
  });
});
