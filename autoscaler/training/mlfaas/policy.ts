/**
 * The `mlfaas` training policy, ours: ElasticFlow's Algorithm 1 admission and Algorithm 2
 * allocation, corrected (`admission.ts`, `allocation.ts`), with buddy placement. Each arrival is
 * judged by itself and blamed only for what it breaks (so a late job blocks nothing) with a
 * counter-offer deadline, a late job runs best-effort on the GPUs the others leave, left-over GPUs
 * go by normalised marginal throughput, and jobs that report a gradient noise scale co-adapt their
 * batch size (FaPES). The `elasticflow` policy, the authors' artifact reproduced quirks included,
 * is apart from ours: `autoscaler/reproductions/elasticflow/`.
 */
import { buddyPlacement } from '../placement/buddy';
import type { TrainingPolicy } from '../types';
import { mlfaasAdmission } from './admission';
import { mlfaasAllocation } from './allocation';
import type { ElasticFlowOptions } from './edf-pass';

/** Default planning margin (s) against scaling overheads; see `ElasticFlowOptions.safetySeconds`. */
export const DEFAULT_SAFETY_SECONDS = 0;

/** Ours. */
export const MLFAAS_OPTIONS: ElasticFlowOptions = { safetySeconds: DEFAULT_SAFETY_SECONDS };

function build(name: string, description: string, opts: ElasticFlowOptions, adaptsBatch: boolean): TrainingPolicy {
  return {
    name,
    description,
    elastic: true,
    elasticMaxGpus: true,
    adaptsBatch,
    admission: mlfaasAdmission(opts),
    allocation: mlfaasAllocation(opts, name),
    placement: buddyPlacement,
  };
}

export function mlfaasPolicy(opts: ElasticFlowOptions = MLFAAS_OPTIONS): TrainingPolicy {
  return build(
    'mlfaas',
    'mlfaas: per-arrival admission by minimum satisfactory share with a counter-offer (a late job blocks nothing and runs best-effort), ' +
    'marginal-return allocation, buddy placement; FaPES goodput with batch co-adaptation for jobs that report a GNS',
    opts,
    true,
  );
}
