import { analyzeFaro, quantileSorted, type SimRecord } from '../../../autoscaler/sim/faro';

function record(rows: Array<[job: number, arrivalS: number, latencyMs: number | null]>, jobs = 1): SimRecord {
  return {
    jobNames: Array.from({ length: jobs }, (_, i) => `j${i}`),
    job: Uint8Array.from(rows.map((r) => r[0])),
    arrival: Float64Array.from(rows.map((r) => r[1])),
    end: Float64Array.from(rows.map((r) => r[1] + (r[2] ?? 0) / 1e3)),
    dropped: Uint8Array.from(rows.map((r) => (r[2] === null ? 1 : 0))),
    ticks: 0,
    decisions: 0,
  };
}

describe('Faro metrics (the artifact analyze_result)', () => {
  test('linear quantile as pandas', () => {
    expect(quantileSorted([1, 2, 3, 4, 5], 0.99)).toBeCloseTo(4.96, 10);
  });

  test('a minute whose p99 is a dropped request has utility 0; p99 over the SLO gives slo / p99', () => {
    const rows: Array<[number, number, number | null]> = [];
    for (let i = 0; i < 10; i++) rows.push([0, 1 + i, 100]);
    rows.push([0, 30, null]);
    for (let i = 0; i < 100; i++) rows.push([0, 60 + i * 0.5, i === 99 ? 1440 : 100]);
    const m = analyzeFaro(record(rows), 720, { slots: 2 });
    // minute 0: p99 interpolates into the dropped one → ~0; minute 1: p99 = 100 + 0.01·(1440 − 100) = 113.4 ms → 1.
    expect(m.perJobUtility[0]).toBeCloseTo(0.5, 6);
    expect(m.lostUtility).toBeCloseTo(0.5, 6);
    expect(m.dropped).toBe(1);
    // violations: minute 0 1/11, minute 1 1/100.
    expect(m.sloViolationRate).toBeCloseTo((1 / 11 + 1 / 100) / 2, 10);
  });

  test('the mean is over all 361 slots of the 6-h run, empty ones counting 0', () => {
    const m = analyzeFaro(record([[0, 1, 100]]), 720);
    expect(m.meanClusterUtility).toBeCloseTo(1 / 361, 10);
  });
});
