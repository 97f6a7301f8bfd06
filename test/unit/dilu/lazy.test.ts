import { DILU_DEFAULTS, diluCount } from '../../../autoscaler/reproductions/dilu/horizontal';
import { DILU_LAZY, lazyIn, lazyOut, pushSample } from '../../../autoscaler/inference/lazy';
import type { Capability, Observation, ScalingSpec } from '../../../autoscaler/inference/types';

/**
 * Dilu's lazy scaling (ASPLOS'25 Sec. 3.4.2): RPS sampled every 1 s into a 40-sample window; out
 * when ≥ 20 samples exceed n·throughput, in when ≥ 30 are below (n − 1)·throughput and n > 1;
 * the window is cleared after each action.
 */

const PER_REPLICA = 10; // req/s
const cap = { capability: () => PER_REPLICA } as unknown as Capability;
const spec = { name: 'f' } as unknown as ScalingSpec;
const cfg = { exclusive: false, smShare: 0.3, quota: 1, batchSize: 1 };
const obs = (rps: number, n: number) =>
  ({ intervalMs: 1000, arrivals: rps, replicas: Array.from({ length: n }, (_, i) => ({ id: `r${i}` })) }) as unknown as Observation;

/** Feeds `rps` each second to a function with n replicas; the second (1-based) of the first action and its result. */
function feed(n: number, rps: number, seconds: number, outByOne = false): { at: number; want: number; cleared: boolean } | undefined {
  const stage = diluCount({ ...DILU_DEFAULTS, outByOne }, cap);
  let state = stage.init();
  for (let s = 1; s <= seconds; s++) {
    const r = stage.count(spec, state, obs(rps, n), s * 1000, cfg);
    state = r.state;
    if (r.want !== n) return { at: s, want: r.want, cleared: state.samples.length === 0 };
  }
  return undefined;
}

describe('lazy window', () => {
  test('keeps the last 40 one-second samples', () => {
    let w: number[] = [];
    for (let i = 0; i < 45; i++) w = pushSample(w, i, DILU_LAZY);
    expect(w).toHaveLength(40);
    expect(w[0]).toBe(5);
  });

  test.each([
    { name: 'out at 20 samples over capacity', samples: [...Array(20).fill(11), ...Array(20).fill(0)], out: true, in: false },
    { name: 'not out at 19', samples: [...Array(19).fill(11), ...Array(21).fill(5)], out: false, in: false },
    { name: 'in at 30 samples below (n − 1)·throughput', samples: [...Array(30).fill(4), ...Array(10).fill(10)], out: false, in: true },
    { name: 'not in at 29', samples: [...Array(29).fill(4), ...Array(11).fill(6)], out: false, in: false },
  ])('$name', ({ samples, out, in: scaleIn }) => {
    expect(lazyOut(samples, 10, DILU_LAZY)).toBe(out);
    expect(lazyIn(samples, 5, DILU_LAZY)).toBe(scaleIn);
  });
});

describe('dilu-horizontal count stage', () => {
  test('scales out on the 20th second over n·throughput, then clears the window', () => {
    expect(feed(1, 15, 40)).toEqual({ at: 20, want: 2, cleared: true });
  });

  test('out to the count the mean hot sample needs (this port), or by one (the artifact\'s scaler, outByOne)', () => {
    expect(feed(1, 35, 40)).toEqual({ at: 20, want: 4, cleared: true });
    expect(feed(1, 35, 40, true)).toEqual({ at: 20, want: 2, cleared: true });
  });

  test('scales in by one on the 30th second below (n − 1)·throughput, then clears the window', () => {
    expect(feed(3, 15, 60)).toEqual({ at: 30, want: 2, cleared: true });
  });

  test('never scales in from one replica, nor while the load sits between (n − 1) and n throughputs', () => {
    expect(feed(1, 0, 60)).toBeUndefined();
    expect(feed(2, 15, 60)).toBeUndefined();
  });
});
