import type { ClusterController } from '../../../autoscaler/multitenant/types';
import { faroSimConfig, runFaroSim, type FaroSimConfig } from '../../../autoscaler/sim/faro';
import { EventQueue } from '../../../autoscaler/sim/faro/event-queue';
import { SharePool, sharePools, type ShareReplica } from '../../../autoscaler/sim/faro/shares';

/**
 * The simulator's optional work-conserving CPU model (cfg.cpu 'shares', autoscaler/sim/faro/shares.ts):
 * a job's quota is its replicas' weight (cgroup cpu.shares) and one CPU their cap, so a busy replica gets
 * at least its quota and borrows what idle ones leave; the default ('quota') is the artifact's hard cap.
 */
const rep = (id: number, job: number): ShareReplica => ({ id, job, work: 0, speed: 0, since: 0, dueAt: -1 });

/** Runs the pool's events to the end; returns each replica's finish time. */
function drain(q: EventQueue, pool: SharePool, reps: ShareReplica[]): number[] {
  const done: number[] = reps.map(() => NaN);
  for (let n = 0; q.size > 0 && n < 1000; n++) {
    const t = q.peekTime();
    const id = q.pop();
    const r = reps[id];
    if (!pool.isDue(r, t)) continue;
    pool.stop(r, t);
    done[id] = t;
  }
  return done;
}

describe('work-conserving shares (SharePool)', () => {
  test('water filling: each busy replica min(1, λ · weight), the capacity used, never below its weight', () => {
    const q = new EventQueue();
    const w = [1, 1, 0.2, 0.2];
    const pool = new SharePool(q, 3, (j) => w[j], (id) => id);
    const reps = w.map((_, i) => rep(i, i));
    reps.forEach((r) => pool.start(r, 10, 0));
    // λ = 3 / 2.4 = 1.25 caps the two weight-1 replicas at one CPU; the 1 CPU left goes 0.5 / 0.5 to the others
    [1, 1, 0.5, 0.5].forEach((v, i) => expect(reps[i].speed).toBeCloseTo(v, 12));
    expect(reps.reduce((s, r) => s + r.speed, 0)).toBeCloseTo(3, 12);
  });

  test('fewer busy replicas than CPUs: each runs at its cap (one CPU) whatever its weight', () => {
    const q = new EventQueue();
    const pool = new SharePool(q, 2, () => 0.3, (id) => id);
    const reps = [rep(0, 0), rep(1, 1)];
    reps.forEach((r) => pool.start(r, 1, 0));
    expect(reps.map((r) => r.speed)).toEqual([1, 1]);
    expect(drain(q, pool, reps)).toEqual([1, 1]);
  });

  test('a replica speeds up when its neighbour finishes (its pending completion is superseded)', () => {
    const q = new EventQueue();
    const w = [0.25, 0.75];
    const pool = new SharePool(q, 1, (j) => w[j], (id) => id);
    const reps = [rep(0, 0), rep(1, 1)];
    reps.forEach((r) => pool.start(r, 1, 0));
    expect(reps.map((r) => r.speed)).toEqual([0.25, 0.75]);
    // the 0.75 one finishes at 4/3; the other has done 1/3 by then and runs the rest (2/3) at 1
    const done = drain(q, pool, reps);
    expect(done[1]).toBeCloseTo(4 / 3, 12);
    expect(done[0]).toBeCloseTo(2, 12);
  });

  test('nodes: the capacity is split into pools of nodeUnits, the last one the remainder', () => {
    const q = new EventQueue();
    expect(sharePools(q, 36, 8, () => 1, (id) => id).map((p) => p.capacity)).toEqual([8, 8, 8, 8, 4]);
    expect(sharePools(q, 32, undefined, () => 1, (id) => id).map((p) => p.capacity)).toEqual([32]);
  });
});

describe("the simulator with cfg.cpu 'shares'", () => {
  /** Sets every job's quota once, at the first tick (t = 0.01 s). */
  const setQuota = (quota: number, jobs: number): ClusterController => {
    let done = false;
    return {
      name: 'set-quota',
      tickS: 0.01,
      tick: () => {
        if (done) return null;
        done = true;
        return { jobs: new Array(jobs).fill({ quota }), reason: 'test' };
      },
    };
  };
  const fixed = { service: { shape: 0, loc: 0.1, scale: 0 }, route: { shape: 0, loc: 0, scale: 0 } };
  function run(over: Partial<FaroSimConfig>, arrivals: number[][], replicas: number[], controller: ClusterController, seed = 1) {
    const cfg = faroSimConfig(2, { ...fixed, ...over });
    return runFaroSim({
      cfg,
      jobNames: arrivals.map((_, i) => `j${i}`),
      arrivals: arrivals.map((a) => Float64Array.from(a)),
      controller,
      initialReplicas: replicas,
      seed,
    });
  }
  const latMs = (rec: ReturnType<typeof run>, job: number) =>
    Array.from(rec.end)
      .map((e, i) => ({ l: Math.round((e - rec.arrival[i]) * 1e3), j: rec.job[i] }))
      .filter((x) => x.j === job)
      .map((x) => x.l);

  test('quota 0.5: hard caps serve at half speed; shares lend the idle job\'s CPU; when both are busy each gets its quota', () => {
    // two jobs with one replica each at quota 0.5 on 2 CPUs; job 0 gets two requests, job 1 none (idle)
    const busyAlone = [[1, 1], []];
    expect(latMs(run({}, busyAlone, [1, 1], setQuota(0.5, 2)), 0)).toEqual([200, 400]);
    expect(latMs(run({ cpu: 'shares' }, busyAlone, [1, 1], setQuota(0.5, 2)), 0)).toEqual([100, 200]);
    // three replicas at 0.5 each all busy on one CPU (Σ quotas = capacity 1.5 ≤ 2, so everyone gets at least 0.5; the
    // 0.5 of a CPU nobody requested is lent too: λ = 2 / 1.5)
    const allBusy = [[1], [1], [1]];
    const lat = [0, 1, 2].map((j) => latMs(run({ cpu: 'shares' }, allBusy, [1, 1, 1], setQuota(0.5, 3)), j)[0]);
    expect(lat).toEqual([150, 150, 150]);
  });

  test('whole-CPU quotas (Faro\'s replicas): shares change nothing, run for run', () => {
    const noisy = { service: { shape: 0.42247119243841247, loc: 0.07930158214998745, scale: 0.06858078649769431 } };
    const arr = [Array.from({ length: 300 }, (_, i) => i * 0.05), Array.from({ length: 200 }, (_, i) => i * 0.08)];
    const idle: ClusterController = { name: 'idle', tickS: 1000, tick: () => null };
    const a = run({ ...noisy }, arr, [1, 1], idle, 5);
    const b = run({ ...noisy, cpu: 'shares' }, arr, [1, 1], idle, 5);
    expect(Array.from(b.end)).toEqual(Array.from(a.end));
  });
});
