import type { MinutePredictor } from '../../autoscaler/multitenant/types';
import { naivePredictor, oraclePredictor } from '../../autoscaler/multitenant/predictors';
import { faroLongTerm } from '../../autoscaler/reproductions/faro/longterm';
import { markHybrid } from '../../autoscaler/reproductions/faro/baselines';
import { FaroHybrid, UtilityLongTerm } from '../../autoscaler/reproductions/faro/hybrid';
import { faroTrace } from '../../autoscaler/sim/faro';
import { registerFaroPolicy, type PredictorName } from './faro-policies';

/**
 * The predictive policies of the Faro comparison: Faro-FairSum and Faro-Sum (engineer A's solver in
 * the hybrid wrapper) and MArk/Cocktail/Barista, each with the rerun's stand-in forecasters.
 */

export function makePredictor(name: PredictorName): MinutePredictor {
  return name === 'oracle' ? oraclePredictor(faroTrace().counts) : naivePredictor();
}

let registered = false;

export function registerPredictivePolicies(): void {
  if (registered) return;
  registered = true;
  for (const [name, objective] of [['Faro-FairSum', 'fairsum'], ['Faro-Sum', 'sum']] as const) {
    registerFaroPolicy({
      name,
      predictive: true,
      make: (R, _seed, p) =>
        new FaroHybrid(new UtilityLongTerm(`faro-${objective}`, faroLongTerm({ objective, capacity: R }), makePredictor(p)), {}, name),
      initialReplicas: () => 1,
    });
  }
  registerFaroPolicy({
    name: 'MArk/Cocktail/Barista',
    predictive: true,
    // model_8.yaml: num_samples 1, quantile 0.6; with one sample the artifact never applies the quantile (point forecast)
    make: (_R, _seed, p) => markHybrid({ predictor: makePredictor(p), quantile: 0.6, samples: 1 }),
    initialReplicas: () => 1,
  });
}
