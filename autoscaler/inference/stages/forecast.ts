/** Forecast stages: the rate R the next interval is provisioned for. */
import { makePredictor, upper } from '../predictors';
import { trendSlope } from '../hybrid-params';
import type { ForecastStage, StageDeps } from './types';

/** The quantiles of the band shown beside R (the dashboard's): the forecast's central 80 %. */
export const BAND_LO = 0.1;
export const BAND_HI = 0.9;

/**
 * R = max(upper quantile of the predictor's forecast, R_min) (HAS-GPU: a Kalman filter's upper
 * quantile), and, with `trend`, a cold-start lead: + max(0, slope)·leadS, the slope a least-squares
 * fit of the observed rate over the last trendWindowS seconds (leadS 0: no lead).
 */
export function quantileForecast({ p, leadS }: StageDeps, trend: boolean): ForecastStage {
  const predictor = makePredictor(p.predictor, { processNoise: p.processNoise, measurementNoise: p.measurementNoise, window: p.window });
  return {
    label: `${predictor.name} q${p.quantile}`,
    init: () => predictor.init(),
    observe: (pred, rps) => predictor.observe(pred, rps),
    rate(pred, state, rps, obs) {
      const R0 = Math.max(upper(predictor.forecast(pred), p.quantile), p.rMin);
      if (!trend) return { R: R0, lead: 0, patch: {} };
      let recent = state.recent;
      let lead = 0;
      if (leadS > 0) {
        const w = Math.max(2, Math.round((p.trendWindowS * 1000) / Math.max(1, obs.intervalMs)));
        recent = [...(recent ?? []).slice(-(w - 1)), rps];
        lead = Math.max(0, trendSlope(recent)) * ((leadS * 1000) / Math.max(1, obs.intervalMs));
      }
      return { R: R0 + lead, lead, patch: { recent } };
    },
    band(pred) {
      const f = predictor.forecast(pred);
      return { mean: Math.max(0, f.mean), lo: upper(f, BAND_LO), hi: upper(f, BAND_HI) };
    },
  };
}
