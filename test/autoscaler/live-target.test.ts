/** The live autoscaler's desired count: never fed back from a rolling update's extra replicas, always in [min, max]. */
import { targetReplicas } from '../../autoscaler/live/observation';

describe('targetReplicas', () => {
  test.each([
    // decided, observed, desired, min, max → target
    { name: 'steady hold', d: 2, o: 2, des: 2, min: 1, max: 5, want: 2 },
    { name: 'steady scale-up', d: 3, o: 2, des: 2, min: 1, max: 5, want: 3 },
    { name: 'steady scale-down', d: 1, o: 2, des: 2, min: 1, max: 5, want: 1 },
    // the reproduced runaway: 2 desired, 2 old + 2 new seen during the rolling update; a hold stays 2
    { name: 'rolling update: hold is a hold', d: 4, o: 4, des: 2, min: 1, max: 2, want: 2 },
    { name: 'rolling update: +1 is +1 on the desired count', d: 5, o: 4, des: 2, min: 1, max: 10, want: 3 },
    { name: 'rolling update after restart (C=0): the policy asks for more than it sees', d: 8, o: 4, des: 2, min: 1, max: 2, want: 2 },
    // a scale-up still starting (desired ahead of what is seen) is not added again
    { name: 'scale-up pending: asking again does not add again', d: 3, o: 2, des: 3, min: 1, max: 5, want: 3 },
    { name: 'clamped to max_scale', d: 40, o: 2, des: 2, min: 1, max: 20, want: 20 },
    { name: 'clamped to min_scale', d: 0, o: 2, des: 2, min: 1, max: 20, want: 1 },
    { name: 'scale to zero when min_scale is 0', d: 0, o: 1, des: 1, min: 0, max: 20, want: 0 },
  ])('$name', ({ d, o, des, min, max, want }) => {
    expect(targetReplicas(d, o, des, min, max)).toBe(want);
  });

  test('iterated over ticks during a rolling update, desired never grows on a hold (no runaway)', () => {
    // the agent keeps the old replicas until as many new ones as desired are ready: seen = old + desired
    let desired = 2;
    const old = 2;
    for (let tick = 0; tick < 50; tick++) {
      const seen = old + desired;
      desired = targetReplicas(seen /* the policy holds what it sees */, seen, desired, 1, 20);
    }
    expect(desired).toBe(2);
  });
});
