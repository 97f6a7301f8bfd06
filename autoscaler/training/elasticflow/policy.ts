/** The `elasticflow` policy: admission (Algorithm 1), allocation (Algorithm 2), buddy placement. */
import { buddyPlacement } from '../placement/buddy';
import type { TrainingPolicy } from '../types';
import { elasticFlowAdmission } from './admission';
import { elasticFlowAllocation } from './allocation';
import type { ElasticFlowOptions } from './edf-pass';

/** Default planning margin (s) against scaling overheads; see `ElasticFlowOptions.safetySeconds`. */
export const DEFAULT_SAFETY_SECONDS = 0;

export function elasticFlowPolicy(opts: ElasticFlowOptions = { safetySeconds: DEFAULT_SAFETY_SECONDS }): TrainingPolicy {
  return {
    name: 'elasticflow',
    description: 'ElasticFlow: deadline admission by minimum satisfactory share, marginal-return allocation, buddy placement; FaPES goodput with batch co-adaptation for jobs that report a GNS',
    elastic: true,
    adaptsBatch: true,
    admission: elasticFlowAdmission(opts),
    allocation: elasticFlowAllocation(opts),
    placement: buddyPlacement,
  };
}
