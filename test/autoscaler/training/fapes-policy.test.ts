import { createFreeGpuTimeline, take } from '../../../autoscaler/training/free-gpu-timeline';
import { manageLoans, serversFromLoad } from '../../../autoscaler/training/fapes/manager';
import { EMPTY_MEMORY, fapesRound, followPlan } from '../../../autoscaler/training/fapes/policy';
import { bestPlan, candidateStarts, choiceSteps, holdPrice, makespanBounds, minFree, priceBounds } from '../../../autoscaler/training/fapes/schedule';
import { getPolicy } from '../../../autoscaler/training/registry';
import { simulate, type SimJob } from '../../../autoscaler/sim/training/engine';
import { aJob, cluster, linear, state } from './fixtures';

describe('FaPES board and plan prices', () => {
  const board = () => {
    const b = createFreeGpuTimeline(0, 4);
    take(b, 0, 10, 2); // job2 holds 2 of 4 GPUs until t=10
    return b;
  };

  test.each([
    { name: 'free now', from: 0, to: 5, want: 2 },
    { name: 'across the release', from: 5, to: 20, want: 2 },
    { name: 'after the release', from: 10, to: 50, want: 4 },
  ])('minFree: $name', ({ from, to, want }) => {
    expect(minFree(board(), from, to)).toBe(want);
  });

  test('candidate starts: now and the round at which the board frees GPUs', () => {
    expect(candidateStarts(board(), 0, 10, 6)).toEqual([0, 10]);
  });

  test.each([
    // price per GPU-round = H(U/H)^(load/cap) · n · slot / (U · cap); U = 100, H = 10, n = 1, slot = 10, cap = 4
    { name: '1 GPU on an empty round', from: 10, to: 20, g: 1, want: (10 * 10) / (100 * 4) },
    { name: '1 GPU at load 2/4', from: 0, to: 10, g: 1, want: (10 * Math.pow(10, 0.5) * 10) / (100 * 4) },
    { name: '2 GPUs at load 2/4: 2/4 and 3/4', from: 0, to: 10, g: 2, want: ((10 * Math.pow(10, 0.5) + 10 * Math.pow(10, 0.75)) * 10) / (100 * 4) },
  ])('holdPrice: $name', ({ from, to, g, want }) => {
    expect(holdPrice(board(), from, to, g, 10, { upper: 100, lower: 10 })).toBeCloseTo(want, 9);
  });

  test('Fig. 3 (numbers ours): waiting one round for 4 GPUs beats starting now on the 2 free ones', () => {
    // job3: 100 iterations; 2 workers barely help (1.2 it/s), 4 workers run 10 it/s.
    const job = { id: 'job3', need: 100, levels: [1, 2, 4], rate: (g: number) => ({ 1: 1, 2: 1.2, 4: 10 })[g] ?? 0 };
    const bounds = priceBounds([job]);
    expect(bounds).toEqual({ upper: 100, lower: 10, jobs: 1 });
    const c = bestPlan(board(), job, 0, 10, bounds)!;
    // Two-phase plans (Fig. 9): 1 free GPU now (10 it by t=10), 4 GPUs from t=10: done at 19 s,
    // objective 19 + 0.79 + 2.60 = 22.39, below waiting idle (20 + 2.89 = 22.89).
    expect(c).toMatchObject({ early: 1, start: 10, gpus: 4, completion: 19 });
    // Starting now on 2 GPUs would finish at 83.3 s: the objective picks the later scale-up.
    expect(c.objective).toBeLessThan(100 / 1.2);
  });

  test.each([
    // rates per level; board: 2 of 4 GPUs free until t=10, all 4 after; slot 10; U=100, H=10
    { name: 'useful small allocation now: run on 1, scale to 4 at t=10', rates: { 1: 1, 2: 1.2, 4: 10 },
      want: { early: 1, start: 10, gpus: 4, completion: 19 } },
    { name: 'small allocation nearly useless: queue for 4 (Fig. 3)', rates: { 1: 0.1, 2: 0.12, 4: 10 },
      want: { early: 0, start: 10, gpus: 4, completion: 20 } },
    { name: 'linear scaling: 2 now and 4 from t=10', rates: { 1: 1, 2: 2, 4: 4 }, want: { early: 2, start: 10, gpus: 4, completion: 30 } },
  ])('bestPlan two-phase: $name', ({ rates, want }) => {
    const r = rates as Record<number, number>;
    const job = { id: 'j', need: 100, levels: [1, 2, 4], rate: (g: number) => r[g] ?? 0 };
    const c = bestPlan(board(), job, 0, 10, { upper: 100, lower: 10 })!;
    expect({ early: c.early, start: c.start, gpus: c.gpus }).toEqual({ early: want.early, start: want.start, gpus: want.gpus });
    expect(c.completion).toBeCloseTo(want.completion, 9);
    expect(choiceSteps(c, 0)).toEqual([{ from: 0, gpus: want.early }, { from: want.start, gpus: want.gpus }]);
  });

  test.each([
    // makespanBounds: U = max need/rate(smallest level); H = max(longest at best level, sum need*g/rate(g) at best g / capacity)
    { name: 'one job', jobs: [{ need: 100, rates: { 1: 1, 4: 4 } }], cap: 4, want: { upper: 100, lower: 25 } },
    { name: 'GPU-work bound dominates', jobs: [{ need: 100, rates: { 1: 1, 4: 4 } }, { need: 100, rates: { 1: 1, 4: 4 } }], cap: 4,
      want: { upper: 100, lower: 50 } },
    { name: 'sublinear: best level 2', jobs: [{ need: 60, rates: { 1: 1, 2: 1.5, 4: 1.2 } }], cap: 4, want: { upper: 60, lower: 40 } },
    { name: 'small + large job', jobs: [{ need: 10, rates: { 1: 1, 4: 4 } }, { need: 10000, rates: { 1: 1, 4: 4 } }], cap: 4,
      want: { upper: 10000, lower: 2502.5 } },
  ])('makespanBounds: $name', ({ jobs, cap, want }) => {
    const js = jobs.map((j, k) => ({ id: `j${k}`, need: j.need, levels: Object.keys(j.rates).map(Number),
      rate: (g: number) => (j.rates as Record<number, number>)[g] ?? 0 }));
    expect(makespanBounds(js, cap)).toEqual({ ...want, jobs: jobs.length });
  });

  test('per-job bounds (old default) on the small + large cohort: U/H = 4000 instead of 4', () => {
    const js = [10, 10000].map((need, k) => ({ id: `j${k}`, need, levels: [1, 4], rate: (g: number) => g }));
    expect(priceBounds(js)).toEqual({ upper: 10000, lower: 2.5, jobs: 2 });
  });
});

describe('fapesRound', () => {
  const c4 = cluster(1, 4);

  test('a lone job on an empty cluster takes the goodput-best plan now', () => {
    const r = fapesRound(state(c4, [aJob('a').iterations(400).curve(linear(4)).build()], 10), 0);
    expect(r.decision.gpus).toEqual({ a: 4 });
    expect(r.decision.plans!.a.predictedCompletion).toBeCloseTo(100);
  });

  test('new jobs come before running ones; a job waiting 3 rounds pops up', () => {
    // Diminishing returns: 2 workers reach 0.79 of the best goodput, 1 worker 0.42.
    const curve = { gpus: [1, 2, 4], iterPerSec: [1, 1.9, 2.4] };
    const running = aJob('run').iterations(10000).curve(curve).build();
    const jobs = [
      { ...running, currentGpus: 4, attainedGpuSeconds: 40 },
      aJob('new').iterations(100).curve(curve).submit(5).waiting(1).build(),
      { ...aJob('old').iterations(100).curve(curve).waiting(3).build(), attainedGpuSeconds: 10 },
    ];
    const r = fapesRound(state(c4, jobs, 10), 10);
    expect(r.decision.reasons.old).toMatch(/^popped up/);
    // Recycled: 4 GPUs shared by 3 jobs (1 each, 0.42 on average) beat the cohort's current 1/3.
    expect(r.decision.reasons.run).toMatch(/rescheduled 4→/);
    expect((r.decision.gpus.old ?? 0) + (r.decision.gpus.new ?? 0)).toBeGreaterThan(0);
    expect(Object.values(r.decision.gpus).reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(4);
  });

  test('a running job due within the next round is kept (filtering: remaining-time awareness)', () => {
    const jobs = [
      { ...aJob('short').iterations(100).done(90).curve(linear(4)).build(), currentGpus: 2, attainedGpuSeconds: 90 },
      aJob('new').iterations(1000).curve(linear(4)).build(),
    ];
    const r = fapesRound(state(c4, jobs, 10), 0);
    expect(r.decision.gpus.short).toBe(2);
    expect(r.decision.reasons.short).toMatch(/^kept 2/);
  });

  test('deadline jobs keep their ElasticFlow minimum share; best-effort jobs plan around it', () => {
    const jobs = [aJob('d').iterations(200).deadline(100).curve(linear(4)).build(), aJob('be').iterations(1000).curve(linear(4)).build()];
    const r = fapesRound(state(c4, jobs, 10), 0);
    expect(r.decision.gpus.d).toBeGreaterThanOrEqual(2); // 200 it by t=100 needs ≥ 2 GPUs
    expect(r.decision.gpus.d + (r.decision.gpus.be ?? 0)).toBeLessThanOrEqual(4);
  });

  test.each([
    // followPlan: steps from now on, completion for the remaining work (rate = g it/s)
    { name: 'constant plan', steps: [{ from: 0, gpus: 2 }], now: 10, need: 100, want: { steps: [{ from: 10, gpus: 2 }], completion: 60 } },
    { name: 'planned scale-up at t=20', steps: [{ from: 0, gpus: 1 }, { from: 20, gpus: 4 }], now: 10, need: 50,
      want: { steps: [{ from: 10, gpus: 1 }, { from: 20, gpus: 4 }], completion: 30 } },
    { name: 'done before the scale-up: step dropped', steps: [{ from: 0, gpus: 2 }, { from: 40, gpus: 4 }], now: 10, need: 20,
      want: { steps: [{ from: 10, gpus: 2 }], completion: 20 } },
    { name: 'queued then start', steps: [{ from: 0, gpus: 0 }, { from: 20, gpus: 4 }], now: 10, need: 40,
      want: { steps: [{ from: 10, gpus: 0 }, { from: 20, gpus: 4 }], completion: 30 } },
  ])('followPlan: $name', ({ steps, now, need, want }) => {
    expect(followPlan(steps, now, need, (g) => g)).toEqual(want);
  });

  test('a kept running job follows its stored plan: planned scale-up 2->4 at t=10 happens', () => {
    const job = { ...aJob('a').iterations(1000).done(20).curve(linear(4)).build(), currentGpus: 2, attainedGpuSeconds: 20 };
    const memory = { ...EMPTY_MEMORY, plans: { a: [{ from: 0, gpus: 2 }, { from: 10, gpus: 4 }] } };
    const r = fapesRound(state(c4, [job], 10), 10, memory, { workConserving: false });
    expect(r.decision.gpus.a).toBe(4);
    expect(r.decision.plans!.a.predictedCompletion).toBeCloseTo(10 + 980 / 4);
  });

  test.each([
    // 'short' holds 2 of 4 GPUs and is due within the round (kept); 'wait' (Fig. 3 rates) plans to
    // queue for 4 GPUs at t=10. Work conservation runs it on the 2 idle GPUs this round meanwhile.
    { workConserving: false, want: { short: 2, wait: 0 }, used: 2 },
    { workConserving: true, want: { short: 2, wait: 2 }, used: 4 },
  ])('work conservation $workConserving: idle GPUs go to the queued job', ({ workConserving, want, used }) => {
    const curve = { gpus: [1, 2, 4], iterPerSec: [0.1, 0.12, 10] };
    const jobs = [
      { ...aJob('short').iterations(100).done(90).curve(linear(4)).build(), currentGpus: 2, attainedGpuSeconds: 90 },
      aJob('wait').iterations(100).curve(curve).build(),
    ];
    const r = fapesRound(state(c4, jobs, 10), 0, EMPTY_MEMORY, { workConserving });
    expect({ short: r.decision.gpus.short, wait: r.decision.gpus.wait ?? 0 }).toEqual(want);
    expect(Object.values(r.decision.gpus).reduce((a, b) => a + b, 0)).toBe(used);
    // the plan itself still queues for 4 GPUs at t=10 (extras are not written into it)
    expect(r.decision.plans!.wait.steps).toEqual([{ from: 0, gpus: 0 }, { from: 10, gpus: 4 }]);
  });

  test('estimation-error correction: half the predicted progress halves the modelled goodput', () => {
    const job = aJob('a').iterations(1000).curve(linear(4)).build();
    const first = fapesRound(state(c4, [job], 10), 0, EMPTY_MEMORY);
    expect(first.memory.last.a).toEqual({ t: 0, done: 0, rate: 4 });
    // 10 s later it reports 20 iterations, 40 were predicted: factor 0.5, completion pushed out.
    const second = fapesRound(state(c4, [{ ...job, doneIterations: 20, currentGpus: 4, attainedGpuSeconds: 40 }], 10), 10, first.memory);
    expect(second.memory.corrections.a).toEqual({ factor: 0.5, samples: 1 });
    expect(second.decision.plans!.a.predictedCompletion).toBeCloseTo(10 + 980 / 2);
  });
});

describe('FaPES-Manager loans and reclaims', () => {
  const cfg = { inferenceServers: [10, 11, 12, 13, 14, 15], loaning: true };
  const none = () => [] as string[];

  test.each([
    { name: 'idle servers are loaned', loaned: [], demand: 2, want: { loaned: [10, 11, 12, 13], loan: [10, 11, 12, 13], reclaim: [] } },
    { name: 'demand within the rest: no change', loaned: [10, 11], demand: 4, want: { loaned: [10, 11], loan: [], reclaim: [] } },
    { name: 'full demand reclaims everything', loaned: [10, 11], demand: 6, want: { loaned: [], loan: [], reclaim: [10, 11] } },
    { name: 'no loaning: dedicated partition', loaned: [], demand: 0, cfg: { ...cfg, loaning: false }, want: { loaned: [], loan: [] } },
  ])('$name', ({ loaned, demand, want, cfg: c }) => {
    expect(manageLoans(c ?? cfg, loaned, demand, none)).toMatchObject(want);
  });

  test('Fig. 6(a) through the manager: N_r = 2 reclaims servers 1 and 2, preempting A and B only', () => {
    const jobs: Record<number, string[]> = { 1: ['A', 'B'], 2: ['A', 'B'], 3: ['j3', 'j4'], 4: ['j3', 'j4'], 5: ['j3', 'j4'], 6: ['j3', 'j4'] };
    const m = manageLoans({ inferenceServers: [1, 2, 3, 4, 5, 6], loaning: true }, [1, 2, 3, 4, 5, 6], 2, (s) => jobs[s]);
    expect(m.reclaim.sort()).toEqual([1, 2]);
    expect(m.preempted).toEqual(['A', 'B']);
    expect(m.loaned).toEqual([3, 4, 5, 6]);
  });

  test('servers from a per-minute load: sized for the peak', () => {
    expect(serversFromLoad([0, 25, 50, 100], 4)).toEqual([0, 1, 2, 4]);
  });
});

describe('simulator with an inference VC', () => {
  const job = (id: string, submit: number): SimJob => ({
    id,
    model: 'm',
    submitTime: submit,
    iterations: 4000,
    batchSize: 64,
    requestedGpus: 8,
    curve: linear(8),
    maxGpusElastic: 8,
    maxGpusBaseline: 8,
  });
  // Three 8-GPU jobs; 2 training servers + 1 inference server that inference needs from t = 120.
  const run = (loaning: boolean) =>
    simulate([job('a', 0), job('b', 0), job('c', 0)], {
      cluster: { nodes: 3, gpusPerNode: 8 },
      slotSeconds: 60,
      policy: getPolicy('fapes'),
      overhead: 'none',
      inference: { servers: [2], demandAt: (t) => (t < 120 ? 0 : 1), loaning },
    });

  test('loaning the idle inference server raises training utilisation; the reclaim preempts its job', () => {
    const without = run(false);
    const withLoans = run(true);
    expect(without.utilisation.reclaims).toBe(0);
    expect(withLoans.utilisation.reclaims).toBe(1);
    expect(withLoans.utilisation.preemptions).toBeGreaterThanOrEqual(1);
    expect(withLoans.jobs.every((j) => j.endTime !== undefined)).toBe(true);
    const mean = (r: typeof without) => r.jobs.reduce((s, j) => s + j.endTime! - j.submitTime, 0) / r.jobs.length;
    expect(mean(withLoans)).toBeLessThan(mean(without));
  });
});
