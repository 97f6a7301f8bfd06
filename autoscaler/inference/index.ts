import { aiad, oneshot } from './baselines/faro-reactive';
import { diluHorizontal } from './baselines/dilu-horizontal';
import { kpa } from './baselines/kpa';
import { openfaasRps } from './baselines/openfaas-rps';
import { staticShare } from './baselines/static-share';
import { hybrid } from './hybrid';
import { policyNames, registerPolicy } from './registry';

export * from './types';
export * from './registry';
export { ProfileCapability, type ProfilePoint } from '../rapp/profile-capability';
export { kalman, lastValue, movingAverage, makePredictor, normalQuantile, upper } from './predictors';
export { latencyPercentiles, percentileFromHistogram, bucketIndex } from './histogram';
export { applyDecision, occupancy, ClusterOverlay } from './cluster';
export { HYBRID_DEFAULTS } from './hybrid';

if (!policyNames().includes('hybrid')) {
  registerPolicy('hybrid', hybrid);
  registerPolicy('kpa', kpa);
  registerPolicy('static-share', staticShare);
  registerPolicy('openfaas-rps', openfaasRps);
  registerPolicy('oneshot', oneshot);
  registerPolicy('aiad', aiad);
  registerPolicy('dilu-horizontal', diluHorizontal);
}
