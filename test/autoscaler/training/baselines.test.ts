import { gandiva, optimusGain, themis, tiresias, tiresiasQueue } from '../../../autoscaler/training/baselines/cluster-schedulers';
import { edf, fifo, sjf } from '../../../autoscaler/training/baselines/simple';
import { admit } from '../../../autoscaler/training/admit';
import { getPolicy, policyNames } from '../../../autoscaler/training/registry';
import { aJob, cluster, linear, state } from './fixtures';

const c = cluster(1, 4);

describe('registry', () => {
  test('has ours and every baseline', () => {
    expect(policyNames().sort()).toEqual(
      ['edf', 'edf-admission', 'elasticflow', 'fapes', 'fifo', 'gandiva', 'mlfaas', 'optimus', 'pollux', 'sjf', 'themis', 'tiresias'].sort(),
    );
  });
  test('unknown names fail with the list', () => {
    expect(() => getPolicy('nope')).toThrow(/unknown training policy "nope"; known: mlfaas, elasticflow/);
  });
  test.each(policyNames())('%s never over-allocates and gives usable counts', (name) => {
    const jobs = [
      aJob('a').requested(4).deadline(50).build(),
      aJob('b').requested(2).submit(1).build(),
      aJob('c').requested(1).submit(2).deadline(20).build(),
      aJob('d').requested(2).submit(3).attained(5000).build(),
    ];
    const d = getPolicy(name).allocation.allocate(state(c, jobs), 10);
    const gpus = Object.values(d.gpus);
    expect(gpus.reduce((x, y) => x + y, 0)).toBeLessThanOrEqual(4);
    for (const g of gpus) expect([0, 1, 2, 4]).toContain(g);
    expect(d.reason).toMatch(name);
  });
});

describe('baselines', () => {
  const a = aJob('a').requested(4).submit(0).iterations(1000).deadline(900).build();
  const b = aJob('b').requested(1).submit(1).iterations(10).deadline(100).build();
  test.each([
    { name: 'fifo: the head blocks', p: fifo, want: { a: 4, b: 0 } },
    { name: 'sjf: the short job first, then nothing fits', p: sjf, want: { a: 0, b: 1 } },
    { name: 'edf: earliest deadline takes up to its max', p: edf, want: { b: 4, a: 0 } },
  ])('$name', ({ p, want }) => {
    expect(p.allocation.allocate(state(c, [a, b]), 0).gpus).toMatchObject(want);
  });

  test.each([
    { attained: 0, q: 0 },
    { attained: 3249, q: 0 },
    { attained: 3250, q: 1 },
    { attained: 7200, q: 2 },
  ])('tiresias queue of $attained GPU-s is $q', ({ attained, q }) => {
    expect(tiresiasQueue(aJob('x').attained(attained).build())).toBe(q);
  });

  test('tiresias: less attained service first (preempts the old job)', () => {
    const old = aJob('old').requested(4).attained(10000).build();
    const young = aJob('young').requested(4).submit(50).build();
    expect(tiresias.allocation.allocate(state(c, [old, young]), 100).gpus).toMatchObject({ young: 4, old: 0 });
  });

  test('gandiva: longest-waiting job is sliced in', () => {
    const running = aJob('run').requested(4).waiting(0).build();
    const waiting = aJob('wait').requested(4).submit(5).waiting(3).build();
    expect(gandiva.allocation.allocate(state(c, [running, waiting]), 100).gpus).toMatchObject({ wait: 4, run: 0 });
  });

  test('themis: the job furthest behind its isolated finish time goes first', () => {
    const early = aJob('early').requested(4).submit(0).iterations(400).build();
    const late = aJob('late').requested(4).submit(90).iterations(400).build();
    expect(themis.allocation.allocate(state(c, [early, late]), 100).gpus).toMatchObject({ early: 4, late: 0 });
  });

  test('optimus: starting a waiting job beats speeding up a running one', () => {
    const j = aJob('j').curve(linear(4)).build();
    expect(optimusGain(j, 0, 1)).toBeGreaterThan(optimusGain(j, 1, 2));
    expect(optimusGain(j, 1, 2)).toBeGreaterThan(optimusGain(j, 2, 4));
  });
});

describe('admit() for the REST API', () => {
  test('201 case: plan with GPUs per round and a completion', () => {
    const d = admit(aJob('n').iterations(8).deadline(10).curve(linear(4)).build(), state(c, []), 0);
    expect(d.admitted).toBe(true);
    if (d.admitted) expect(d.plan.predictedCompletion).toBeLessThanOrEqual(10);
  });
  test('409 case: reason and counter-offer', () => {
    const holder = aJob('h').iterations(40).deadline(10).curve(linear(4)).build();
    const d = admit(aJob('n').iterations(8).deadline(5).curve(linear(4)).build(), state(c, [holder]), 0);
    expect(d).toMatchObject({ admitted: false, earliestFeasibleDeadline: 12 });
  });
  test('policies without admission admit with a forecast', () => {
    const d = admit(aJob('n').iterations(8).deadline(1).curve(linear(4)).build(), state(c, []), 0, 'tiresias');
    expect(d.admitted).toBe(true);
  });
});
