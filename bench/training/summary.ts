/**
 * The training headline's aggregation, fixed in code: over the traces with a rerun of the authors'
 * simulator, the smallest and the mean of `mlfaas` ÷ the authors' ElasticFlow (accepted jobs), and
 * the largest relative gap between our `elasticflow` and the authors' accepted count.
 */
export interface TraceOutcome {
  /** Our `elasticflow`'s accepted jobs. */
  readonly ours: number;
  /** The authors' accepted jobs. */
  readonly theirs: number;
  /** `mlfaas` accepted ÷ `theirs`. */
  readonly ratio: number;
}

export interface FidelitySummary {
  readonly min: number;
  readonly mean: number;
  readonly maxError: number;
  readonly traces: number;
}

export function fidelitySummary(rows: readonly TraceOutcome[]): FidelitySummary {
  if (rows.length === 0) return { min: NaN, mean: NaN, maxError: NaN, traces: 0 };
  const ratios = rows.map((r) => r.ratio);
  return {
    min: Math.min(...ratios),
    mean: ratios.reduce((a, b) => a + b, 0) / ratios.length,
    maxError: Math.max(...rows.map((r) => Math.abs(r.ours - r.theirs) / r.theirs)),
    traces: rows.length,
  };
}
