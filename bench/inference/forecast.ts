import { makePredictor, upper } from '../../autoscaler/inference/predictors';
import { mulberry32, poisson } from '../../autoscaler/sim/rng';

export interface ForecastError {
  predictor: string;
  /** Mean absolute error against the next second's observed rate (its Poisson count). */
  mae: number;
  rmse: number;
  /** Mean absolute error against the next second's true rate (the trace's). */
  maeTrue: number;
  /** Fraction of observed rates at or below the forecast's 0.9 upper quantile. */
  coverage90: number;
  /** Mean of (0.9 upper quantile − true rate)⁺: what provisioning for that bound holds spare, req/s. */
  spare90: number;
}

/**
 * One-step-ahead errors of each predictor, one observation a second as the live loop makes them:
 * the trace's rate (req/s, one value per `intervalS` seconds) held for its interval, and each
 * second's observation a Poisson count at that rate (seeded), so a predictor sees the counting
 * noise it sees live and in the simulator. Errors are taken against the next observation and
 * against the true rate.
 */
export function forecastErrors(rates: number[], intervalS = 1, seed = 42): ForecastError[] {
  const truth: number[] = [];
  for (const r of rates) for (let k = 0; k < intervalS; k++) truth.push(r);
  const rand = mulberry32(seed);
  const obs = truth.map((r) => poisson(rand, r));
  return ['kalman', 'last-value', 'moving-average'].map((name) => {
    const p = makePredictor(name);
    let s = p.init();
    let ae = 0;
    let se = 0;
    let aeT = 0;
    let cov = 0;
    let spare = 0;
    let n = 0;
    for (let i = 0; i < obs.length; i++) {
      if (i > 0) {
        const f = p.forecast(s);
        const e = obs[i] - f.mean;
        ae += Math.abs(e);
        se += e * e;
        aeT += Math.abs(truth[i] - f.mean);
        const u = upper(f, 0.9);
        if (obs[i] <= u + 1e-9) cov++;
        spare += Math.max(0, u - truth[i]);
        n++;
      }
      s = p.observe(s, obs[i]);
    }
    return { predictor: name, mae: ae / n, rmse: Math.sqrt(se / n), maeTrue: aeT / n, coverage90: cov / n, spare90: spare / n };
  });
}
