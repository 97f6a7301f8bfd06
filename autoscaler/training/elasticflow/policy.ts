/**
 * Two ElasticFlow policies (Algorithm 1 admission, Algorithm 2 allocation, buddy placement):
 * - `elasticflow` is the authors' artifact (`pkusys/ElasticFlow`, `scheduler/scheduler.py`,
 *   `ef-accessctrl`), quirks included (`artifact-*.ts`): an event's arrivals are admitted or
 *   declined as a whole, nothing is admitted while an admitted job is late, a late job keeps its
 *   deadline priority, and left-over GPUs go by marginal GPU time. The batch size never changes.
 * - `mlfaas` is ours (`admission.ts`, `allocation.ts`): each arrival is judged by itself and blamed
 *   only for what it breaks (so a late job blocks nothing) with a counter-offer deadline, a late
 *   job runs best-effort on the GPUs the others leave, left-over GPUs go by normalised marginal
 *   throughput, and jobs that report a gradient noise scale co-adapt their batch size (FaPES).
 */
import { buddyPlacement } from '../placement/buddy';
import type { TrainingPolicy } from '../types';
import { elasticFlowAdmission } from './admission';
import { elasticFlowAllocation } from './allocation';
import { artifactAdmission, artifactAllocation } from './artifact-phases';
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
    admission: elasticFlowAdmission(opts),
    allocation: elasticFlowAllocation(opts, name),
    placement: buddyPlacement,
  };
}

export function elasticFlowPolicy(): TrainingPolicy {
  return {
    name: 'elasticflow',
    description:
      "ElasticFlow as its authors' artifact runs it: an event's arrivals admitted or declined together (all declined while an admitted job is late), the artifact's minimum-satisfactory-share planner, left-over GPUs by marginal GPU time, buddy placement; the batch size never changes",
    elastic: true,
    elasticMaxGpus: true,
    adaptsBatch: false,
    admission: artifactAdmission,
    allocation: artifactAllocation,
    placement: buddyPlacement,
  };
}

export function mlfaasPolicy(opts: ElasticFlowOptions = MLFAAS_OPTIONS): TrainingPolicy {
  return build(
    'mlfaas',
    'mlfaas: per-arrival admission by minimum satisfactory share with a counter-offer (a late job blocks nothing and runs best-effort), marginal-return allocation, buddy placement; FaPES goodput with batch co-adaptation for jobs that report a GNS',
    opts,
    true,
  );
}
