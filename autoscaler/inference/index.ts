/** The inference side's public surface: the contract, the policies by name and the helpers policies share. */
export * from './types';
export * from './registry';
export { ProfileCapability, type LatencyPoint } from '../rapp/profile-capability';
export { kalman, lastValue, movingAverage, makePredictor, normalQuantile, upper } from './predictors';
export { latencyPercentiles, percentileFromHistogram, bucketIndex } from './histogram';
export { applyDecision, occupancy, ClusterOverlay } from './cluster';
export { HYBRID_DEFAULTS } from './hybrid';
