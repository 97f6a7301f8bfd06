import type { FaroRow } from '../../../bench/multitenant/faro';
import { oursVsFaroTable } from '../../../bench/multitenant/ours-table';
import { OURS_LO_NAME, OURS_PLATFORM_NAME, OURS_RR_NAME } from '../../../bench/multitenant/ours-policy';

const row = (size: number, policy: string, lostMean: number): FaroRow => ({
  size,
  policy,
  predictive: false,
  ours: { none: { seeds: { n: 5, lostMean, lostCi: 0.01, violationMean: 0.01, violationCi: 0.001 } } },
});

describe('bench:multitenant ours-vs-Faro table (issue 24, b by router and CPU model)', () => {
  const fs = 'Faro-FairSum on the platform\'s router';
  const sum = 'Faro-Sum on the platform\'s router';
  const rows = [
    row(36, OURS_RR_NAME, 0.3), row(36, OURS_LO_NAME, 0.2944), row(36, OURS_PLATFORM_NAME, 0.1), row(36, fs, 0.4), row(36, sum, 0.32),
    row(32, OURS_RR_NAME, 0.66), row(32, OURS_LO_NAME, 0.6208), row(32, OURS_PLATFORM_NAME, 0.2), row(32, fs, 0.7), row(32, sum, 0.9),
  ];

  test('b is ours as the platform runs it (its router, quotas lent) ÷ the best Faro stored, worst over sizes (not the decomposition rows)', () => {
    const t = oursVsFaroTable(rows, [36, 32]);
    expect(t.vsFaroBest).toBeCloseTo(Math.max(0.1 / 0.368, 0.2 / 0.776), 9);
    expect(t.vsFaroSameRouter).toBeCloseTo(Math.max(0.1 / 0.32, 0.2 / 0.7), 9);
  });

  test('the caption states the choice and the same-router ratio; every row is in the table', () => {
    const md = oursVsFaroTable(rows, [36, 32]).lines.join('\n');
    expect(md).toContain('as the platform runs it');
    expect(md).toContain('Against the best Faro variant on the same router');
    expect(md).toContain('36: 0.313 (Faro-Sum 0.320)');
    expect(md).toContain('lent only within nodes of 4 CPUs');
    for (const r of rows) expect(md).toContain(`| ${r.size} | ${r.policy} |`);
  });

  test('no rows: b is NaN, not a made-up number', () => {
    expect(Number.isNaN(oursVsFaroTable([], [36]).vsFaroBest)).toBe(true);
  });
});
