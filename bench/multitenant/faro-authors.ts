/**
 * The authors' figures for the Faro comparison, copied from issue 24's table ("The authors' figures
 * (their artifacts, run outside the repo on 2026-11-26)"): lost cluster utility on the 10-job
 * workload, with the cluster SLO violation rate where the table gives it. `stored` = the results
 * the artifact ships (5 Poisson seeds, their N-HiTS predictor); `rerunNaive` / `rerunOracle` = their
 * simulator rerun with seed 42 and the artifact-compatible naive / oracle predictors. Reference
 * constants only: nothing of ours is here.
 */
export interface AuthorsFigure {
  readonly size: number;
  readonly policy: string;
  readonly stored?: number;
  readonly storedViolation?: number;
  readonly rerunNaive?: number;
  readonly rerunNaiveViolation?: number;
  readonly rerunOracle?: number;
  readonly rerunOracleViolation?: number;
}

export const FARO_AUTHORS: readonly AuthorsFigure[] = [
  {
    size: 36, policy: 'Faro-FairSum', stored: 0.368, storedViolation: 0.0133,
    rerunNaive: 0.459, rerunNaiveViolation: 0.0192, rerunOracle: 0.346, rerunOracleViolation: 0.0115,
  },
  { size: 36, policy: 'Faro-Sum', stored: 0.372, storedViolation: 0.0136, rerunNaive: 0.483, rerunOracle: 0.372 },
  { size: 36, policy: 'MArk/Cocktail/Barista', stored: 0.636, storedViolation: 0.035, rerunNaive: 0.644, rerunOracle: 0.776 },
  { size: 36, policy: 'AIAD', stored: 1.393, storedViolation: 0.0719, rerunNaive: 1.419 },
  { size: 36, policy: 'FairShare', stored: 2.077, storedViolation: 0.163, rerunNaive: 2.071 },
  { size: 36, policy: 'Oneshot', stored: 3.874, storedViolation: 0.322, rerunNaive: 3.9 },
  {
    size: 32, policy: 'Faro-FairSum', stored: 0.776, storedViolation: 0.0314,
    rerunNaive: 0.896, rerunNaiveViolation: 0.0425, rerunOracle: 0.717, rerunOracleViolation: 0.0269,
  },
  { size: 32, policy: 'Faro-Sum', stored: 0.913, rerunNaive: 1.264, rerunOracle: 0.961 },
  { size: 32, policy: 'MArk/Cocktail/Barista', stored: 1.775, rerunNaive: 1.351, rerunOracle: 1.828 },
  { size: 32, policy: 'AIAD', stored: 1.714, rerunNaive: 1.733 },
  { size: 32, policy: 'FairShare', stored: 2.077, rerunNaive: 2.071 },
  { size: 32, policy: 'Oneshot', stored: 4.366, rerunNaive: 4.128 },
  { size: 16, policy: 'Faro-Sum', stored: 6.006, storedViolation: 0.573, rerunNaive: 6.075 },
  { size: 16, policy: 'Faro-FairSum', stored: 7.85, rerunNaive: 7.644 },
  { size: 16, policy: 'MArk/Cocktail/Barista', stored: 7.433, rerunNaive: 7.081 },
  { size: 16, policy: 'AIAD', stored: 8.148, rerunNaive: 8.196 },
  { size: 16, policy: 'FairShare', stored: 9.22 },
  { size: 16, policy: 'Oneshot', stored: 8.047, rerunNaive: 8.007 },
];

/** The best Faro variant of the stored column at each size (what ours is judged against). */
export const FARO_BEST_STORED: Readonly<Record<number, number>> = { 36: 0.368, 32: 0.776, 16: 6.006 };

export function authorsFigure(size: number, policy: string): AuthorsFigure | undefined {
  return FARO_AUTHORS.find((f) => f.size === size && f.policy === policy);
}
