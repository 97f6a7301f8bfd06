import { makePredictor, upper } from '../../autoscaler/inference/predictors';

export interface ForecastError {
  predictor: string;
  mae: number;
  rmse: number;
  /** Fraction of observations at or below the forecast's 0.9 upper quantile. */
  coverage90: number;
}

/** One-step-ahead errors of each predictor on a rate series (req/s per interval). */
export function forecastErrors(rates: number[]): ForecastError[] {
  return ['kalman', 'last-value', 'moving-average'].map((name) => {
    const p = makePredictor(name);
    let s = p.init();
    let ae = 0;
    let se = 0;
    let cov = 0;
    let n = 0;
    for (let i = 0; i < rates.length; i++) {
      if (i > 0) {
        const f = p.forecast(s);
        const e = rates[i] - f.mean;
        ae += Math.abs(e);
        se += e * e;
        if (rates[i] <= upper(f, 0.9) + 1e-9) cov++;
        n++;
      }
      s = p.observe(s, rates[i]);
    }
    return { predictor: name, mae: ae / n, rmse: Math.sqrt(se / n), coverage90: cov / n };
  });
}
