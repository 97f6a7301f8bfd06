export * from './types';
export { admit, planRounds } from './admit';
export { forecast, type Forecast } from './forecast';
export { getPolicy, policyNames, UnknownPolicyError } from './registry';
export { gpusAt, roundsOf, gpuSeconds } from './plan';
export { levelsOf, throughputAt, curveFromRow } from './curve';
export { earliestFeasibleDeadline } from './elasticflow/admission';
export type { ElasticFlowOptions } from './elasticflow/edf-pass';
export { buddyPlace } from './placement/buddy';
