/**
 * The agent's rolling-update policy (maxSurge 1, maxUnavailable 0): which replicas to start and
 * stop, by table, and iterated as the agent would apply it through a whole update.
 */
import { MAX_SURGE, planRollout, RolloutReplica } from '../../gateway/providers/local/rollout';

/** `o1r` = old, ready, started at second 1; `c3s` = current, starting, second 3; `!` = evict-named. */
function r(code: string): RolloutReplica {
  const m = /^([oc])(\d+)([rscd])(!?)$/.exec(code);
  if (!m) throw new Error(`bad replica code ${code}`);
  const state = ({ r: 'ready', s: 'starting', c: 'crashed', d: 'draining' } as const)[m[3] as 'r' | 's' | 'c' | 'd'];
  return { id: code, version: m[1] === 'o' ? 'old' : 'current', state, startedAt: `2026-01-01T00:00:${m[2].padStart(2, '0')}Z`, evict: m[4] === '!' };
}

describe('planRollout', () => {
  test.each([
    // steady state and plain scaling (no update in progress): the old rules
    { name: 'steady', desired: 2, have: ['c1r', 'c2r'], start: 0, stop: [] },
    { name: 'deploy', desired: 2, have: [], start: 2, stop: [] },
    { name: 'scale up', desired: 3, have: ['c1r'], start: 2, stop: [] },
    { name: 'scale down: newest ready first', desired: 1, have: ['c1r', 'c2r', 'c3r'], start: 0, stop: ['c3r', 'c2r'] },
    { name: 'scale down: crashed, then starting, before ready', desired: 1, have: ['c1r', 'c2s', 'c3c'], start: 0, stop: ['c3c', 'c2s'] },
    { name: 'scale down: the evict set first', desired: 2, have: ['c1r!', 'c2r', 'c3s'], start: 0, stop: ['c1r!'] },
    { name: 'a crashed replica counts (it restarts itself)', desired: 2, have: ['c1r', 'c2c'], start: 0, stop: [] },
    { name: 'scale to zero', desired: 0, have: ['c1r', 'c2s'], start: 0, stop: ['c2s', 'c1r'] },
    // a rolling update, one step at a time
    { name: 'update begins: one new replica (surge 1), old ones stay', desired: 2, have: ['o1r', 'o2r'], start: 1, stop: [] },
    { name: 'new one starting: wait', desired: 2, have: ['o1r', 'o2r', 'c3s'], start: 0, stop: [] },
    { name: 'new one ready: retire one old (newest), start the next', desired: 2, have: ['o1r', 'o2r', 'c3r'], start: 1, stop: ['o2r'] },
    { name: 'last new one ready: retire the last old', desired: 2, have: ['o1r', 'c3r', 'c4r'], start: 0, stop: ['o1r'] },
    { name: 'single replica: surge to two, then swap', desired: 1, have: ['o1r'], start: 1, stop: [] },
    { name: 'single replica, new ready', desired: 1, have: ['o1r', 'c2r'], start: 0, stop: ['o1r'] },
    { name: 'old ones not serving go at once; the surge fills up to desired+1', desired: 2, have: ['o1r', 'o2s', 'o3c'], start: 2, stop: ['o2s', 'o3c'] },
    { name: 'nothing old serves: plain start', desired: 2, have: ['o1s', 'o2c'], start: 2, stop: ['o1s', 'o2c'] },
    { name: 'desired 0 during an update: everything stops', desired: 0, have: ['o1r', 'o2r', 'c3s'], start: 0, stop: ['c3s', 'o2r', 'o1r'] },
    { name: 'an update over an update: the half-done version is old too', desired: 2, have: ['o1r', 'o2s'], start: 2, stop: ['o2s'] },
    // a new version that crash-loops stalls the update; old ones keep serving
    { name: 'new one crashed: nothing more starts, old ones stay', desired: 2, have: ['o1r', 'o2r', 'c3c'], start: 0, stop: [] },
    { name: 'new one restarting after a crash: still waiting', desired: 2, have: ['o1r', 'o2r', 'c3s'], start: 0, stop: [] },
    // scale changes during an update
    { name: 'scale down mid-update: old ones first', desired: 1, have: ['o1r', 'o2r', 'o3r', 'c4s'], start: 0, stop: ['o3r', 'o2r'] },
    { name: 'scale down mid-update: the evict-named old one first', desired: 2, have: ['o1r!', 'o2r', 'o3r', 'c4s'], start: 0, stop: ['o1r!'] },
    { name: 'scale down mid-update: surplus new ones go, starting before ready', desired: 1, have: ['o1r', 'c2r', 'c3s'], start: 0, stop: ['c3s', 'o1r'] },
    { name: 'scale down mid-update: never below desired ready, starting new ones go instead', desired: 2, have: ['o1r', 'o2r', 'c3s', 'c4s'], start: 0,
      stop: ['c4s'] },
    { name: 'scale up mid-update: one more new one within the surge', desired: 4, have: ['o1r', 'o2r', 'c3s'], start: 2, stop: [] },
    { name: 'scale up mid-update: surge counts the starting ones', desired: 3, have: ['o1r', 'o2r', 'c3s', 'c4s'], start: 0, stop: [] },
    { name: 'fewer ready than desired: no ready one retires until more are ready', desired: 3, have: ['o1r', 'c2r', 'c3s', 'c4s'], start: 0, stop: [] },
  ])('$name', ({ desired, have, start, stop }) => {
    const plan = planRollout(desired, have.map(r));
    expect({ start: plan.start, stop: [...plan.stop].sort() }).toEqual({ start, stop: [...stop].sort() });
  });

  test('an old version recovered after a restart is kept on its first start, beside the surge; not once it crashed', () => {
    const rec = (code: string, extra: Partial<RolloutReplica> = {}) => ({ ...r(code), recovering: true, ...extra });
    expect(planRollout(1, [rec('o1s')])).toEqual({ start: 1, stop: [] });
    expect(planRollout(2, [rec('o1s'), rec('o2s')])).toEqual({ start: 1, stop: [] });
    expect(planRollout(1, [rec('o1s', { restarts: 1 })]).stop).toEqual(['o1s']);
    expect(planRollout(1, [rec('o1c')]).stop).toEqual(['o1c']);
    // once it serves it is an old ready replica like any other: retired when the new one is ready
    expect(planRollout(1, [rec('o1r'), r('c2r')]).stop).toEqual(['o1r']);
  });

  test('scale-down victims come in the kept order (evict set, crashed, starting, newest)', () => {
    expect(planRollout(1, ['c1r', 'c2r', 'c3s', 'c4c', 'c5r!'].map(r)).stop).toEqual(['c5r!', 'c4c', 'c3s', 'c2r']);
  });

  test('a stalled update says why, once per crash', () => {
    const crashed = { ...r('c3c'), restarts: 2, lastError: 'exited (status 1): boom' };
    const plan = planRollout(2, [r('o1r'), r('o2r'), crashed]);
    expect(plan.stalled).toBe('rolling update stalled: new replica c3c crashed 2 time(s) (exited (status 1): boom); 2 old replica(s) keep serving');
    expect(planRollout(2, [r('o1r'), r('o2r'), { ...crashed, state: 'starting' }]).stalled).toBe(plan.stalled);
    expect(planRollout(2, [r('o1r'), r('o2r'), r('c3s')]).stalled).toBeUndefined(); // first start: just slow
  });

  /** Applies plans as the agent does, with new replicas getting ready (or crashing) between steps. */
  function simulate(desired: number, have: RolloutReplica[], ready: (r: RolloutReplica) => boolean, steps = 50) {
    let live = have;
    let n = 100;
    let maxLive = live.length;
    let minReady = live.filter((x) => x.state === 'ready').length;
    for (let i = 0; i < steps; i++) {
      const plan = planRollout(desired, live);
      live = live.filter((x) => !plan.stop.includes(x.id));
      minReady = Math.min(minReady, live.filter((x) => x.state === 'ready').length);
      for (let k = 0; k < plan.start; k++)
        live.push({ id: `n${n}`, version: 'current', state: 'starting', startedAt: `2026-01-01T00:01:${n++}Z`, evict: false });
      maxLive = Math.max(maxLive, live.length);
      live = live.map((x) => (x.version === 'current' && x.state === 'starting' ? { ...x, state: ready(x) ? 'ready' : 'crashed' } : x));
    }
    return { live, maxLive, minReady };
  }

  test.each([1, 2, 3, 5, 8])('a whole update of %i ready replicas: never more than desired+1, never fewer ready', (d) => {
    const old = Array.from({ length: d }, (_, i) => r(`o${i + 1}r`));
    const { live, maxLive, minReady } = simulate(d, old, () => true);
    expect(maxLive).toBe(d + MAX_SURGE);
    expect(minReady).toBe(d);
    expect(live.every((x) => x.version === 'current' && x.state === 'ready')).toBe(true);
    expect(live).toHaveLength(d);
  });

  test('a crash-looping new version never takes an old ready replica down', () => {
    const { live, maxLive, minReady } = simulate(3, [r('o1r'), r('o2r'), r('o3r')], () => false);
    expect(maxLive).toBe(4);
    expect(minReady).toBe(3);
    expect(live.filter((x) => x.version === 'old')).toHaveLength(3);
  });
});
