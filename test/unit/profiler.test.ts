import { batchGrid, monotone, ProfilePoint } from '../../gateway/providers/local/profiler';

const pt = (batch: number, quota: number, latencyMs: number): ProfilePoint => ({ batch, quota, smShare: 1, latencyMs, throughput: (batch / latencyMs) * 1000 });

describe('profiler', () => {
  test.each([
    { max: 1, want: [1] },
    { max: 8, want: [1, 2, 4, 8] },
    { max: 12, want: [1, 2, 4, 8, 12] },
  ])('batchGrid($max)', ({ max, want }) => expect(batchGrid(max)).toEqual(want));

  it('makes latency non-increasing in quota per batch size, keeping throughput consistent', () => {
    const noisy = [pt(1, 1, 10), pt(1, 0.5, 8), pt(1, 0.25, 40), pt(2, 1, 12), pt(2, 0.5, 30)];
    const m = monotone(noisy);
    const at = (b: number, q: number) => m.find((p) => p.batch === b && p.quota === q)!;
    expect(at(1, 0.5).latencyMs).toBe(10); // was faster than quota 1: noise
    expect(at(1, 0.5).throughput).toBeCloseTo(100);
    expect(at(1, 0.25).latencyMs).toBe(40);
    expect(at(2, 0.5).latencyMs).toBe(30);
    expect(noisy[1].latencyMs).toBe(8); // pure
  });
});
